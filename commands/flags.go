package commands

import (
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
)

const catOutput = "Output"

// outputFlags are added to every command by prepareCommand.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "jq", Aliases: []string{"q"}, Usage: "jq `EXPR` applied to the result (gojq; no jq needed)", Category: catOutput},
		&cli.StringSliceFlag{Name: "arg", Usage: "bind `NAME=VALUE` as $NAME in --jq (repeatable)", Category: catOutput},
		&cli.BoolFlag{Name: "raw", Aliases: []string{"r"}, Usage: "print string results without quotes, like jq -r", EnvVars: []string{"DTB_RAW"}, Category: catOutput},
		&cli.BoolFlag{Name: "pretty", Usage: "indent the JSON even when stdout is not a terminal", EnvVars: []string{"DTB_PRETTY"}, Category: catOutput},
		&cli.BoolFlag{Name: "compact", Usage: "one JSON line per value even on a terminal", EnvVars: []string{"DTB_COMPACT"}, Category: catOutput},
		&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour: auto, always or never (NO_COLOR is honoured)", EnvVars: []string{"DTB_COLOR"}, Category: catOutput},
		&cli.BoolFlag{Name: "json-errors", Usage: "print errors as a JSON document even on a terminal", EnvVars: []string{"DTB_JSON_ERRORS"}, Category: catOutput},
		&cli.StringFlag{Name: "max-bytes", Value: "16MiB", Usage: "ceiling `N` on a printed result (bytes, or with KiB/MiB/GiB; 0: none); over it the command fails result-too-large", EnvVars: []string{"DTB_MAX_BYTES"}, Category: catOutput},
	}
}

// parseBytes reads a --max-bytes value: bytes, or a number with K/KiB, M/MiB
// or G/GiB (powers of 1024); 0 means no ceiling (-1 in output.Options).
func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, output.Usage("--max-bytes wants a size such as 16777216, 64MiB or 0 (no ceiling), got %q", s)
	}
	if n == 0 {
		return -1, nil
	}
	return n * mult, nil
}

func outputOptions(c *cli.Context) (output.Options, error) {
	var err error
	opts := output.Options{
		JQ:         c.String("jq"),
		Raw:        c.Bool("raw"),
		Pretty:     c.Bool("pretty"),
		Compact:    c.Bool("compact"),
		Color:      c.String("color"),
		JSONErrors: c.Bool("json-errors"),
	}
	if opts.MaxBytes, err = parseBytes(c.String("max-bytes")); err != nil {
		return opts, err
	}
	args, err := keyValues(c.StringSlice("arg"), "--arg")
	if err != nil {
		return opts, err
	}
	opts.Args = args
	return opts, nil
}

// keyValues parses NAME=VALUE flag values.
func keyValues(pairs []string, flag string) (map[string]string, error) {
	m := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, output.Usage("%s wants NAME=VALUE, got %q", flag, p)
		}
		m[k] = v
	}
	return m, nil
}

// flagChoices are the values a flag takes when they are a fixed set, by flag
// name: the tools' schemas list them (an MCP enum). TestMCPSchemas checks them
// against the commands' own lists where one exists (paper).
var flagChoices = map[string][]string{
	"button":     {"left", "right", "middle"},
	"input-mode": {"cdp", "dom"},
	"dialog":     {"accept", "dismiss"},
	"wait":       {"load", "domcontentloaded", "none"},
	"format":     {"jpeg", "png"},
	"paper":      {"letter", "legal", "tabloid", "ledger", "a3", "a4", "a5", "a6"},
	"level":      {"debug", "info", "warning", "error"},
	"fail-on":    {"debug", "info", "warning", "error"},
	"to":         {"top", "bottom", "left", "right"},
	"via":        {"relay", "cdp"},
}
