package commands

import (
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
	}
}

func outputOptions(c *cli.Context) (output.Options, error) {
	opts := output.Options{
		JQ:         c.String("jq"),
		Raw:        c.Bool("raw"),
		Pretty:     c.Bool("pretty"),
		Compact:    c.Bool("compact"),
		Color:      c.String("color"),
		JSONErrors: c.Bool("json-errors"),
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
