package commands

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

const catBrowserFlags = "Browser"

// browserFlags are the flags of every command that talks to the browser: how to
// reach it, which session, which tab, and the per-command timeout.
func browserFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cdp", Usage: "attach to a running Chrome: `URL|PORT` (http://host:port, ws://…, wss://…, or a port)", EnvVars: []string{"DTB_CDP"}, Category: catBrowserFlags},
		&cli.StringSliceFlag{Name: "cdp-header", Usage: "`'Name: value'` header for the --cdp handshake, e.g. a remote service's auth (repeatable)", EnvVars: []string{"DTB_CDP_HEADER"}, Category: catBrowserFlags},
		&cli.StringFlag{Name: "cdp-ca", Usage: "trust the private CA in the PEM `FILE` for a TLS --cdp (https://, wss://), besides the system's", EnvVars: []string{"DTB_CDP_CA"}, Category: catBrowserFlags},
		&cli.BoolFlag{Name: "auto-connect", Usage: "attach to the user's running Chrome through its DevToolsActivePort file", EnvVars: []string{"DTB_AUTO_CONNECT"}, Category: catBrowserFlags},
		&cli.DurationFlag{Name: "connect-timeout", Value: 30 * time.Second, Usage: "how long to wait for a browser to answer: connecting to --cdp (discovery and websocket), a launch's DevTools port, the remote-debugging prompt", EnvVars: []string{"DTB_CONNECT_TIMEOUT"}, Category: catBrowserFlags},
		&cli.StringFlag{Name: "session", Value: "default", Usage: "session `NAME`: its own browser, tabs, aliases and workspaces", EnvVars: []string{"DTB_SESSION"}, Category: catBrowserFlags},
		&cli.BoolFlag{Name: "no-launch", Usage: "fail (no-browser, exit 5) instead of launching the session's browser", EnvVars: []string{"DTB_NO_LAUNCH"}, Category: catBrowserFlags},
		&cli.BoolFlag{Name: "headed", Usage: "launch the session's browser with a window (needs Chromium or Chrome, not the headless shell)", EnvVars: []string{"DTB_HEADED"}, Category: catBrowserFlags},
		&cli.StringFlag{Name: "chrome", Usage: "browser binary `PATH` to launch", EnvVars: []string{"DTB_CHROME"}, Category: catBrowserFlags},
		&cli.StringFlag{Name: "viewport", Usage: "viewport `WxH` of the tabs dtb opens and of the browser it launches, in CSS pixels (default 1280x900)", EnvVars: []string{"DTB_VIEWPORT"}, Category: catBrowserFlags},
		&cli.StringFlag{Name: "tab", Usage: "tab to act on: target `ID`, alias (t3) or unique id prefix", EnvVars: []string{"DTB_TAB"}, Category: catBrowserFlags},
		&cli.StringFlag{Name: "workspace", Usage: "workspace `NAME`: its window for new tabs, its active tab for page commands", EnvVars: []string{"DTB_WORKSPACE"}, Category: catBrowserFlags},
		&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "deadline of the whole command (exit 4 when reached)", EnvVars: []string{"DTB_TIMEOUT"}, Category: catBrowserFlags},
	}
}

// withBrowserFlags returns the command's own flags followed by browserFlags.
func withBrowserFlags(own ...cli.Flag) []cli.Flag {
	return append(own, browserFlags()...)
}

// browserConfig builds the internal/cdp configuration from the flags.
func browserConfig(c *cli.Context, inv *invocation) (session.Config, error) {
	header := http.Header{}
	for _, h := range c.StringSlice("cdp-header") {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return session.Config{}, output.Usage("--cdp-header wants 'Name: value', got %q", h)
		}
		header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	cfg := session.Config{
		Session:        c.String("session"),
		CDP:            c.String("cdp"),
		CAFile:         c.String("cdp-ca"),
		AutoConnect:    c.Bool("auto-connect"),
		ConnectTimeout: c.Duration("connect-timeout"),
		NoLaunch:       c.Bool("no-launch"),
		Headed:         c.Bool("headed"),
		Chrome:         c.String("chrome"),
		Warn:           inv.printer.Warn,
	}
	if v := c.String("viewport"); v != "" {
		if _, err := session.ParseViewport(v); err != nil {
			return session.Config{}, err
		}
		cfg.Viewport = v
	}
	if len(header) > 0 {
		cfg.Headers = header
	}
	if cfg.CDP != "" && cfg.AutoConnect {
		return cfg, output.Usage("--cdp and --auto-connect exclude each other")
	}
	return cfg, nil
}

// browserSession opens the session named by the flags (a state-file read, no
// connection) and the command's deadline. Callers defer both closers.
func browserSession(c *cli.Context, inv *invocation) (*session.Session, context.Context, func(), error) {
	cfg, err := browserConfig(c, inv)
	if err != nil {
		return nil, nil, func() {}, err
	}
	ctx, cancel := commandContext(c)
	sess, err := session.Open(ctx, cfg)
	if err != nil {
		cancel()
		return nil, nil, func() {}, err
	}
	return sess, ctx, func() { sess.Close(); cancel() }, nil
}

// commandContext is the command's context with the --timeout deadline.
func commandContext(c *cli.Context) (context.Context, context.CancelFunc) {
	parent := c.Context
	if parent == nil {
		parent = context.Background()
	}
	if d := c.Duration("timeout"); d > 0 {
		return context.WithTimeout(parent, d)
	}
	return context.WithCancel(parent)
}

// tabSelector is the --tab / --workspace selection of a page command.
func tabSelector(c *cli.Context) session.TabSelector {
	return session.TabSelector{Tab: c.String("tab"), Workspace: c.String("workspace")}
}

// withPage runs fn on the selected tab, under its dialog guard, and
// detaches afterwards.
func withPage(c *cli.Context, inv *invocation, fn func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error)) (any, error) {
	return withGuardedPage(c, inv, pageMode{}, fn)
}

// pageMode is how a page command meets a tab that runs a script.
type pageMode struct {
	// stopScript: the command runs the user's own script (eval); one still
	// running when --timeout passes is stopped, so that the tab answers
	// again.
	stopScript bool
	// waitBusy: a tab an earlier command left busy is not refused at once
	// (session.RefuseBusy): dtb wait waits for it, a history navigation may
	// leave it.
	waitBusy bool
}

func withGuardedPage(c *cli.Context, inv *invocation, mode pageMode, fn func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error)) (any, error) {
	return withTab(c, inv, func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error) {
		if !mode.waitBusy {
			if err := sess.RefuseBusy(ctx, p); err != nil {
				return nil, err
			}
		}
		g, err := guardDialogs(ctx, c, sess, p, "", "")
		if err != nil {
			return nil, err
		}
		g.StopScript = mode.stopScript
		return g.Run(ctx, func(ctx context.Context) (any, error) { return fn(ctx, sess, p) })
	})
}

// withTab runs fn on the selected tab and detaches afterwards.
func withTab(c *cli.Context, inv *invocation, fn func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error)) (any, error) {
	sess, ctx, done, err := browserSession(c, inv)
	if err != nil {
		return nil, err
	}
	defer done()
	p, err := sess.Page(ctx, tabSelector(c))
	if err != nil {
		return nil, timeoutOr(ctx, err)
	}
	defer p.Close()
	res, err := fn(ctx, sess, p)
	return res, timeoutOr(ctx, err)
}

// timeoutOr turns an error after the deadline into a timeout error.
func timeoutOr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == context.DeadlineExceeded {
		if e, ok := err.(*output.Error); ok && (e.Reason == "timeout" || e.Reason == "page-unresponsive" || e.Reason == "navigation-pending") {
			return e
		}
		return output.Wrap("timeout", err, "the command's --timeout passed")
	}
	return err
}
