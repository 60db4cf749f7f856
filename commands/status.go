package commands

import (
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:     "status",
		Category: catBrowser,
		Usage:    "the session's browser, current tab, every tab in every window, and the workspaces",
		UsageText: `dtb status [--session NAME] [--cdp URL|PORT]

Never launches a browser. With none reachable it still succeeds, with
"connected": false and diagnostics: the endpoints tried and why each failed, the
browser binary a launch would use, and the session file.

Examples:
  dtb status --jq '.tabs[] | {alias, url, owned}'
  dtb status -r --jq .currentTab.alias`,
		Flags: withBrowserFlags(),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			sess, ctx, done, err := browserSession(c, inv)
			if err != nil {
				return nil, err
			}
			defer done()
			st, err := sess.Status(ctx)
			if err != nil {
				return nil, err
			}
			return statusWithHost{st, hostStatus(sess.Name())}, nil
		})),
	})
}
