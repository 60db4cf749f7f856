package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/relayclient"
)

func init() {
	register(&cli.Command{
		Name:     "commands",
		Category: catToolbar,
		Usage:    "list the toolbar's commands with their descriptions and input fields",
		UsageText: `dtb commands [--reporter ID] [--via relay|cdp]

Prints {instanceId, allowRun, connection, commands}; each command has id, label and,
when declared, description, group, keywords, shortcut and input (a flat map of fields).

Examples:
  dtb commands -r --jq '.commands[].id'
  dtb commands --jq '.commands[] | select(.id == "flags.set") | .input.fields'`,
		Flags: toolbarCommandFlags(
			&cli.DurationFlag{Name: "timeout", Value: relayclient.DefaultTimeout, Usage: "give up after `DURATION`, the whole command's deadline across its requests", EnvVars: []string{"DTB_TIMEOUT"}},
		),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			t, done, err := toolbarTransport(c, inv, c.Duration("timeout"))
			if err != nil {
				return nil, err
			}
			defer done()
			doc, err := t.Commands(c.Context)
			if err != nil {
				return nil, err
			}
			// Like dtb state: say when the list comes from a stale or ambiguous page.
			if err := warnConnection(c, inv, doc, false, false); err != nil {
				return nil, err
			}
			return doc, nil
		})),
	})
}
