package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/read"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "open",
		Category: catBrowser,
		Usage:    "open a URL in a new tab, the current tab, a given tab or a workspace's window",
		UsageText: `dtb open URL [--current | --tab ID | --workspace NAME [--incognito[=true|false]]] [--wait load|domcontentloaded|none]

A URL without a scheme gets http:// for localhost and 127.0.0.1, https:// otherwise.
Only tabs dtb created are navigated (--current/--tab on another tab: not-owned, exit 6).
A DNS or connection failure is navigation-failed (exit 1) with Chrome's net error;
an HTTP error status is reported in "status", not a failure.

Examples:
  dtb open http://127.0.0.1:8080 --jq .tab.alias
  dtb open example.com --workspace research
  dtb open localhost:5173/settings --current --wait domcontentloaded`,
		Flags: pageFlags(
			&cli.BoolFlag{Name: "current", Usage: "navigate the current tab instead of opening a new one"},
			&cli.BoolFlag{Name: "incognito", Usage: "open in an incognito window/context (a workspace window's incognito-ness is fixed; a mismatch opens a new window that takes over the workspace)"},
			navWaitFlag(),
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() != 1 {
				return nil, output.Usage("open wants exactly one URL")
			}
			wait, err := cdp.ParseWait(c.String("wait"))
			if err != nil {
				return nil, err
			}
			opts := session.OpenOptions{
				URL:       c.Args().First(),
				Current:   c.Bool("current"),
				Tab:       c.String("tab"),
				Workspace: c.String("workspace"),
				Wait:      wait,
				// Track DOM changes from the first node, so a later extract or
				// wait knows at once whether the page is quiet.
				Prepare: read.AddTracker,
			}
			if c.IsSet("incognito") {
				v := c.Bool("incognito")
				opts.Incognito = &v
			}
			answer, err := cdp.ParseDialogAnswer(c.String("dialog"))
			if err != nil {
				return nil, err
			}
			sess, ctx, done, err := browserSession(c, inv)
			if err != nil {
				return nil, err
			}
			defer done()
			res, err := sess.OpenGuarded(ctx, opts, answer)
			return res, timeoutOr(ctx, err)
		}),
	})
}
