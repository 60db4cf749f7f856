package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/session"
)

// launchResult is what `dtb browser launch` prints.
type launchResult struct {
	Endpoint   string `json:"endpoint"`
	WebSocket  string `json:"webSocket"`
	PID        int    `json:"pid"`
	Binary     string `json:"binary"`
	Headless   bool   `json:"headless"`
	ProfileDir string `json:"profileDir"`
	Temporary  bool   `json:"temporaryProfile"`
	Version    string `json:"version"`
	Session    string `json:"session"`
	Reused     bool   `json:"reused"`
}

func init() {
	register(&cli.Command{
		Name:     "browser",
		Category: catBrowser,
		Usage:    "launch or stop the session's own browser",
		UsageText: `dtb browser launch [--headed] [--chrome PATH] [--user-data-dir DIR] [--window-size WxH]
dtb browser stop`,
		Subcommands: []*cli.Command{
			{
				Name:  "launch",
				Usage: "launch the session's own browser (detached; reused by later commands)",
				UsageText: `dtb browser launch [--headed] [--chrome PATH] [--user-data-dir DIR] [--window-size WxH]

Headless by default, preferring chromium-headless-shell; --headed needs Chromium or
Chrome. When the session's browser already runs it is reported with "reused": true.

Example:
  dtb browser launch -r --jq .endpoint`,
				Flags: withBrowserFlags(
					&cli.StringFlag{Name: "user-data-dir", Usage: "profile `DIR` (default: a temporary one, removed by 'dtb browser stop')", EnvVars: []string{"DTB_USER_DATA_DIR"}},
					&cli.StringFlag{Name: "window-size", Usage: "window size `WxH`", EnvVars: []string{"DTB_WINDOW_SIZE"}},
				),
				Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
					cfg, err := browserConfig(c, inv)
					if err != nil {
						return nil, err
					}
					cfg.UserDataDir = c.String("user-data-dir")
					cfg.WindowSize = c.String("window-size")
					ctx, cancel := commandContext(c)
					defer cancel()
					sess, err := session.Open(ctx, cfg)
					if err != nil {
						return nil, err
					}
					defer sess.Close()
					b, reused, err := sess.LaunchBrowser(ctx)
					if err != nil {
						return nil, timeoutOr(ctx, err)
					}
					return launchResult{Endpoint: b.Endpoint, WebSocket: b.WebSocket, PID: b.PID, Binary: b.Binary, Headless: b.Headless, ProfileDir: b.ProfileDir, Temporary: b.TempProfile, Version: b.Version, Session: sess.Name(), Reused: reused}, nil
				})),
			},
			{
				Name:      "stop",
				Usage:     "stop the session's own browser and remove its temporary profile (an attached browser is left running)",
				UsageText: "dtb browser stop [--session NAME]",
				Flags:     withBrowserFlags(),
				Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
					sess, ctx, done, err := browserSession(c, inv)
					if err != nil {
						return nil, err
					}
					defer done()
					res, err := sess.StopBrowser(ctx)
					if err == nil && res.Detached {
						inv.printer.Warn("attached", res.Message, nil)
					}
					return res, timeoutOr(ctx, err)
				})),
			},
		},
	})
}
