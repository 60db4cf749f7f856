package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/read"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "back",
		Category: catBrowser,
		Usage:    "go back one entry in the tab's history and wait for the page, as open does",
		UsageText: `dtb back [--tab ID] [--wait load|domcontentloaded|none]

Prints the new url and title, the url it came from ("from"), the document's HTTP
status, and whether the page came from the back/forward cache or was the same
document (a pushState or #fragment entry: no load). With no entry before the
current one it fails no-history-entry (exit 3). Only tabs dtb opened are
navigated (not-owned, exit 6).

Examples:
  dtb back --jq .url
  dtb back --tab t2 --wait domcontentloaded`,
		Flags: pageFlags(navWaitFlag()),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			return historyCommand(c, inv, func(ctx context.Context, p *cdp.Page, wait cdp.WaitMode) (any, error) {
				return p.GoHistory(ctx, -1, wait)
			})
		})),
	})
	register(&cli.Command{
		Name:     "forward",
		Category: catBrowser,
		Usage:    "go forward one entry in the tab's history and wait for the page, as open does",
		UsageText: `dtb forward [--tab ID] [--wait load|domcontentloaded|none]

As back, the other way: no entry after the current one is no-history-entry (exit 3).

Examples:
  dtb back && dtb forward --jq '{url, title}'`,
		Flags: pageFlags(navWaitFlag()),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			return historyCommand(c, inv, func(ctx context.Context, p *cdp.Page, wait cdp.WaitMode) (any, error) {
				return p.GoHistory(ctx, 1, wait)
			})
		})),
	})
	register(&cli.Command{
		Name:     "reload",
		Category: catBrowser,
		Usage:    "reload the tab and wait for the page, as open does",
		UsageText: `dtb reload [--hard] [--tab ID] [--wait load|domcontentloaded|none]

--hard bypasses the browser's cache (Shift+reload). Prints the url, title and HTTP
status of the reloaded document. A reload that ends on the browser's error page
(the server went away) fails navigation-failed (exit 1). Only tabs dtb opened are
reloaded (not-owned, exit 6).

Examples:
  dtb reload --jq .status
  dtb reload --hard && dtb console --fail-on error`,
		Flags: pageFlags(
			&cli.BoolFlag{Name: "hard", Usage: "bypass the cache"},
			navWaitFlag(),
		),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			return historyCommand(c, inv, func(ctx context.Context, p *cdp.Page, wait cdp.WaitMode) (any, error) {
				return p.Reload(ctx, c.Bool("hard"), wait)
			})
		})),
	})
}

// historyCommand runs a navigation of the selected tab, which dtb must own.
func historyCommand(c *cli.Context, inv *invocation, nav func(ctx context.Context, p *cdp.Page, wait cdp.WaitMode) (any, error)) (any, error) {
	wait, err := cdp.ParseWait(c.String("wait"))
	if err != nil {
		return nil, err
	}
	// A busy page is not refused: a navigation to another site leaves it.
	return withGuardedPage(c, inv, pageMode{waitBusy: true}, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
		if !p.Owned {
			return nil, cdp.NotOwned(p)
		}
		// As open does: the new document's DOM changes are tracked from its
		// first node, so a later extract or wait knows at once whether it is quiet.
		if err := read.AddTracker(ctx, p); err != nil {
			return nil, cdp.WrapCDP(ctx, err, "preparing the navigation")
		}
		return nav(ctx, p, wait)
	})
}

// navWaitFlag is the --wait of the commands that navigate (open, back, forward, reload).
func navWaitFlag() cli.Flag {
	return &cli.StringFlag{Name: "wait", Value: "load", Usage: "wait for `EVENT`: load, domcontentloaded or none", EnvVars: []string{"DTB_WAIT"}}
}
