package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "console",
		Category: catBrowser,
		Usage:    "print the tab's console messages and uncaught exceptions, including those from before dtb attached",
		UsageText: `dtb console [--level debug|info|warning|error] [--since DURATION] [--fail-on debug|info|warning|error] [--watch DURATION] [--clear]

Each message has level (debug, info, warning, error), source (console, exception,
or the browser's own: network, violation, security …), type, text, url, line,
column, time and, for exceptions, stack. Chrome keeps the page's console calls
and uncaught exceptions (and its own log entries, such as failed loads) and
hands them to every new connection, so messages logged before this command ran
are listed: see docs/ci.md for what it keeps. "counts" counts every level before
--level and --since; "count" is the number listed. Through the session host
(dtb's normal mode) a tab is recorded from the first command that used it, across
documents (up to 5,000 messages): the list is that record, with "recordedSince".

--fail-on L fails console-errors (exit 1, nothing on stdout) when a listed message
is at level L or above: a CI gate. --watch keeps listening for new messages that
long; --clear empties the browser's buffers after reading, so the next call
lists only newer messages.

Examples:
  dtb open http://127.0.0.1:8080 && dtb console --fail-on error
  dtb console --level warning --jq '.messages[] | "\(.level) \(.text)"' -r
  dtb console --since 30s --watch 2s
  dtb click --role button --name Save && dtb console --level error --jq .count`,
		Flags: pageFlags(
			&cli.StringFlag{Name: "level", Usage: "list only messages at `LEVEL` or above: debug, info, warning, error"},
			&cli.DurationFlag{Name: "since", Usage: "list only messages of the last `DURATION` (e.g. 30s)"},
			&cli.StringFlag{Name: "fail-on", Usage: "fail console-errors (exit 1) when a listed message is at `LEVEL` or above", EnvVars: []string{"DTB_CONSOLE_FAIL_ON"}},
			&cli.DurationFlag{Name: "watch", Usage: "keep listening for new messages this `LONG`"},
			&cli.BoolFlag{Name: "clear", Usage: "empty the browser's console buffers after reading"},
		),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			o := pagedata.ConsoleOptions{Since: c.Duration("since"), Wait: c.Duration("watch"), Clear: c.Bool("clear")}
			var err error
			if c.IsSet("level") {
				if o.Level, err = pagedata.ParseLevel(c.String("level"), "--level"); err != nil {
					return nil, err
				}
			}
			var failOn string
			if v := c.String("fail-on"); v != "" {
				if failOn, err = pagedata.ParseLevel(v, "--fail-on"); err != nil {
					return nil, err
				}
			}
			if o.Since < 0 || o.Wait < 0 {
				return nil, output.Usage("--since and --watch must not be negative")
			}
			o.MaxBytes = inv.printer.MaxBytes()
			return withPage(c, inv, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
				res, err := pagedata.ReadConsole(ctx, p, o)
				if err != nil {
					return nil, err
				}
				if failOn != "" {
					if err := res.FailOn(failOn); err != nil {
						return nil, err
					}
				}
				return res, nil
			})
		})),
	})
}
