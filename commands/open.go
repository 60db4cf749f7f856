package commands

import (
	"context"

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
			sess, ctx, done, err := browserSession(c, inv)
			if err != nil {
				return nil, err
			}
			defer done()
			return openWatched(ctx, c, inv, sess, opts)
		}),
	})
}

// openWatched opens under the dialog guard of the tab: a page that opens a
// dialog while it loads ends the wait at once (the navigation happened) and
// the dialog is reported, or answered by --dialog.
func openWatched(ctx context.Context, c *cli.Context, inv *invocation, sess *session.Session, opts session.OpenOptions) (any, error) {
	var g *session.DialogGuard
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepare := opts.Prepare
	opts.Prepare = func(pctx context.Context, p *cdp.Page) error {
		var err error
		if g, err = guardDialogs(ctx, c, sess, p, "", ""); err != nil {
			return err
		}
		go func() {
			select {
			case <-g.Watch.Opened():
				cancel()
			case <-dctx.Done():
			}
		}()
		if prepare != nil {
			return prepare(pctx, p)
		}
		return nil
	}
	res, err := sess.OpenURL(dctx, opts)
	if g == nil {
		return res, timeoutOr(ctx, err)
	}
	if err != nil && g.Watch.Open() != nil {
		// The navigation committed: its page opened the dialog while loading.
		res = &session.OpenResult{Tab: cdp.TabRef{ID: g.Page.ID, Alias: g.Page.Alias}, URL: g.Watch.Open().URL, NewTab: !opts.Current && opts.Tab == ""}
		err = nil
	}
	out, err := g.Finish(ctx, res, err)
	return out, timeoutOr(ctx, err)
}
