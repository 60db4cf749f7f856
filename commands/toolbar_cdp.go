package commands

import (
	"context"
	"encoding/json"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

// cdpSessionReachable reports, without launching or dialling anything, whether
// the toolbar commands should default to CDP: an explicit browser, or a session
// browser that is still running.
func cdpSessionReachable(c *cli.Context) bool {
	if c.String("cdp") != "" || c.Bool("auto-connect") {
		return true
	}
	return session.BrowserRunning(c.Context, c.String("session"))
}

// cdpToolbar is the toolbar transport over CDP on the selected tab.
func cdpToolbar(c *cli.Context, inv *invocation, timeout time.Duration) (*cdpTransport, error) {
	if c.IsSet("reporter") {
		return nil, output.Usage("--reporter picks a page reporting to a relay; over CDP the tab is chosen with --tab (and the instance with --instance)")
	}
	return &cdpTransport{c: c, inv: inv, timeout: timeout, instance: c.String("instance"), global: c.String("global")}, nil
}

// cdpTransport connects to the tab on its first call and keeps the connection
// for the calls after it (run's check and run, every poll of state --until); an
// error drops it, so the next call connects afresh (the tab may have gone).
// Each call is bounded by the caller's context and the command's timeout.
type cdpTransport struct {
	c        *cli.Context
	inv      *invocation
	timeout  time.Duration
	instance string
	global   string

	sess *session.Session
	page *cdp.Page
	tb   *toolbar.CDP
}

func (t *cdpTransport) with(ctx context.Context, fn func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error)) (json.RawMessage, error) {
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	res, err := t.call(ctx, fn)
	if err != nil {
		t.Close()
	}
	return res, timeoutOr(ctx, err)
}

func (t *cdpTransport) call(ctx context.Context, fn func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error)) (json.RawMessage, error) {
	if t.tb == nil {
		cfg, err := browserConfig(t.c, t.inv)
		if err != nil {
			return nil, err
		}
		if t.sess, err = session.Open(ctx, cfg); err != nil {
			return nil, err
		}
		if t.page, err = t.sess.Page(ctx, tabSelector(t.c)); err != nil {
			return nil, err
		}
		t.tb = &toolbar.CDP{Page: t.page, Tab: toolbar.Tab{ID: t.page.ID, Alias: t.page.Alias}, Instance: t.instance, Global: t.global}
	}
	return fn(ctx, t.tb)
}

// Close detaches from the tab and closes the session, if connected.
func (t *cdpTransport) Close() {
	if t.page != nil {
		t.page.Close()
		t.page, t.tb = nil, nil
	}
	if t.sess != nil {
		t.sess.Close()
		t.sess = nil
	}
}

func (t *cdpTransport) State(ctx context.Context) (json.RawMessage, error) {
	return t.with(ctx, func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error) { return tb.State(ctx) })
}

func (t *cdpTransport) Commands(ctx context.Context) (json.RawMessage, error) {
	return t.with(ctx, func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error) { return tb.Commands(ctx) })
}

func (t *cdpTransport) Run(ctx context.Context, id string, input json.RawMessage) (json.RawMessage, error) {
	return t.with(ctx, func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error) { return tb.Run(ctx, id, input) })
}
