package commands

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/relayclient"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

func init() {
	register(&cli.Command{
		Name:      "run",
		Category:  catToolbar,
		Usage:     "run a toolbar command on the page",
		ArgsUsage: "ID [INPUT]",
		UsageText: `dtb run ID [JSON | key=value ... | -] [--input-file FILE] [--no-check]

INPUT is one JSON document, or key=value pairs: a value that parses as JSON is that
JSON value (value=9 is a number, value=true a boolean), key:=JSON forces JSON,
key==text forces a string. "-" reads JSON from stdin. The input is checked against the
command's declared fields first (unknown field, missing required field, wrong type,
value not in an enum: exit 2 naming the field); --no-check skips the check.

Prints the answer: ok, result (when the command returned something), command, and
over a relay ranIn and waitedMs. A command that throws is exit 1 (reason threw).

Examples:
  dtb run flags.set key=search.rank value=9 --jq .ok
  dtb run flags.set '{"key":"new-header","value":true}'
  echo '{"key":"search.rank"}' | dtb run flags.set -   # no value: clears the override`,
		Flags: toolbarCommandFlags(
			&cli.StringFlag{Name: "input-file", Usage: "read the input JSON from `FILE` (- for stdin)"},
			&cli.BoolFlag{Name: "no-check", Usage: "send the input without checking it against the command's fields", EnvVars: []string{"DTB_NO_CHECK"}},
			&cli.DurationFlag{Name: "timeout", Value: relayclient.DefaultTimeout, Usage: "give up after `DURATION`, the whole command's deadline across its requests (the default is above the relay's own 10 s so its 504 reaches you)", EnvVars: []string{"DTB_TIMEOUT"}},
		),
		Action: action(runCommand),
	})
}

func runCommand(c *cli.Context, inv *invocation) (any, error) {
	args := c.Args().Slice()
	if len(args) == 0 {
		return nil, output.Usage("dtb run needs a command id; dtb commands lists them")
	}
	id, rest := args[0], args[1:]
	in, err := commandInput(c, inv, rest)
	if err != nil {
		return nil, err
	}
	t, done, err := toolbarTransport(c, inv, c.Duration("timeout"))
	if err != nil {
		return nil, err
	}
	defer done()
	warn := func(w toolbar.Warning) { inv.printer.Warn(w.Reason, w.Message, nil) }
	return toolbar.RunChecked(c.Context, t, id, in, !c.Bool("no-check"), c.String("reporter"), warn)
}

// commandInput reads the input from the arguments, --input-file or stdin.
func commandInput(c *cli.Context, inv *invocation, rest []string) (toolbar.Input, error) {
	file := c.String("input-file")
	if len(rest) == 1 && rest[0] == "-" {
		if file != "" {
			return toolbar.Input{}, output.Usage("give the input either as - or with --input-file, not both")
		}
		file = "-"
		rest = nil
	}
	if file == "" {
		return toolbar.ParseArgs(rest)
	}
	if len(rest) > 0 {
		return toolbar.Input{}, output.Usage("give the input either as arguments or with --input-file, not both")
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(inv.io.Stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return toolbar.Input{}, output.Wrap("bad-input", err, "cannot read the input")
	}
	return toolbar.FromJSON(data, file)
}
