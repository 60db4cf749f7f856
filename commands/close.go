package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
)

func init() {
	register(&cli.Command{
		Name:     "close",
		Category: catBrowser,
		Usage:    "close the current or given tab, or a workspace, if dtb opened it",
		UsageText: `dtb close [--tab ID|alias] | dtb close --workspace NAME

Only tabs dtb created are closed; any other tab is not-owned (exit 6) and stays
open. --workspace closes the workspace's tabs, and so its window unless that
window also holds tabs dtb did not open.

Examples:
  dtb close --tab t3
  dtb close --workspace research --jq .windowClosed`,
		Flags: withBrowserFlags(),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() > 0 {
				return nil, output.Usage("close takes no arguments (use --tab or --workspace)")
			}
			if c.String("tab") != "" && c.String("workspace") != "" {
				return nil, output.Usage("close takes --tab or --workspace, not both")
			}
			sess, ctx, done, err := browserSession(c, inv)
			if err != nil {
				return nil, err
			}
			defer done()
			if ws := c.String("workspace"); ws != "" {
				res, err := sess.CloseWorkspace(ctx, ws)
				return res, timeoutOr(ctx, err)
			}
			res, err := sess.CloseTab(ctx, c.String("tab"))
			return res, timeoutOr(ctx, err)
		}),
	})
}
