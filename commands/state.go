package commands

import (
	"context"
	"encoding/json"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

func init() {
	register(&cli.Command{
		Name:     "state",
		Category: catToolbar,
		Usage:    "read the toolbar's state: flags, metrics, environment, diagnostics, connection",
		UsageText: `dtb state [--until JQ] [--fresh] [--strict] [--reporter ID] [--via relay|cdp]

Prints the page's state document: the snapshot's own keys, a "connection" object and an
"extensions" map (each extension's published data, null when absent or failed).

Examples:
  dtb state --jq '.extensions.flags.flags[] | {key, effective}'
  dtb state --until '.connection.connected' --timeout 60s   # wait for the page in CI
  dtb state --until '.extensions.flags.reloadPending == []' --jq .connection.ageMs`,
		Flags: toolbarCommandFlags(
			&cli.StringFlag{Name: "until", Usage: "poll until the jq `PREDICATE` is truthy on the state, then print that state"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up after `DURATION` (with --until: exit 4)", EnvVars: []string{"DTB_TIMEOUT"}},
			&cli.DurationFlag{Name: "interval", Value: 100 * time.Millisecond, Usage: "poll every `DURATION` with --until", EnvVars: []string{"DTB_INTERVAL"}},
			&cli.BoolFlag{Name: "fresh", Usage: "fail (exit 5, reason stale) when the page has not checked in within staleMs", EnvVars: []string{"DTB_FRESH"}},
			&cli.BoolFlag{Name: "strict", Usage: "fail (exit 7, reason ambiguous-reporters) when several pages report", EnvVars: []string{"DTB_STRICT"}},
		),
		Action: action(noArgs(runState)),
	})
}

func runState(c *cli.Context, inv *invocation) (any, error) {
	timeout := c.Duration("timeout")
	t, done, err := toolbarTransport(c, inv, timeout)
	if err != nil {
		return nil, err
	}
	defer done()
	var doc json.RawMessage
	if until := c.String("until"); until != "" {
		opts, err := outputOptions(c) // --arg binds in --until as in --jq
		if err != nil {
			return nil, err
		}
		pred, err := output.CompileJQ(until, opts.Args)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(c.Context, timeout)
		defer cancel()
		doc, err = toolbar.WaitFor(ctx, t, pred, opts.Args, c.Duration("interval"))
		if err != nil {
			return nil, err
		}
	} else if doc, err = t.State(c.Context); err != nil {
		return nil, err
	}
	if err := warnConnection(c, inv, doc, c.Bool("fresh"), c.Bool("strict")); err != nil {
		return nil, err
	}
	return doc, nil
}

// warnConnection tells the user on stderr what the connection object says about a
// state or commands document (stale, ambiguous, busy), or fails with --fresh and
// --strict.
func warnConnection(c *cli.Context, inv *invocation, doc []byte, fresh, strict bool) error {
	warns, err := toolbar.CheckConnection(doc, fresh, strict, c.String("reporter"))
	if err != nil {
		return err
	}
	for _, w := range warns {
		inv.printer.Warn(w.Reason, w.Message, nil)
	}
	return nil
}
