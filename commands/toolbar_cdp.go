package commands

import (
	"context"
	"encoding/json"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

// cdpSessionReachable reports, without launching or dialling anything, whether
// the toolbar commands should default to CDP: an explicit browser, or a session
// browser that is still running.
func cdpSessionReachable(c *cli.Context) bool {
	if c.String("cdp") != "" || c.Bool("auto-connect") {
		return true
	}
	sess, err := cdp.Open(c.Context, cdp.Config{Session: c.String("session"), NoLaunch: true})
	if err != nil {
		return false
	}
	defer sess.Close()
	b := sess.State().Browser
	return b != nil && (b.Attached || cdp.ProcessAlive(b.PID))
}

// cdpToolbar is the toolbar transport over CDP on the selected tab. The tab is
// connected lazily, on the first call, and detached after each call.
func cdpToolbar(c *cli.Context, timeout time.Duration) (toolbar.Transport, error) {
	if c.IsSet("reporter") {
		return nil, output.Usage("--reporter picks a page reporting to a relay; over CDP the tab is chosen with --tab (and the instance with --instance)")
	}
	inv := c.App.Metadata[metaKey].(*invocation)
	return &cdpTransport{c: c, inv: inv, instance: c.String("instance"), global: c.String("global")}, nil
}

type cdpTransport struct {
	c        *cli.Context
	inv      *invocation
	instance string
	global   string
}

func (t *cdpTransport) with(fn func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error)) (json.RawMessage, error) {
	res, err := withPage(t.c, t.inv, func(ctx context.Context, _ *cdp.Session, p *cdp.Page) (any, error) {
		tb := &toolbar.CDP{Page: p, Tab: toolbar.Tab{ID: p.ID, Alias: p.Alias}, Instance: t.instance, Global: t.global}
		return fn(ctx, tb)
	})
	if err != nil {
		return nil, err
	}
	return res.(json.RawMessage), nil
}

func (t *cdpTransport) State(context.Context) (json.RawMessage, error) {
	return t.with(func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error) { return tb.State(ctx) })
}

func (t *cdpTransport) Commands(context.Context) (json.RawMessage, error) {
	return t.with(func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error) { return tb.Commands(ctx) })
}

func (t *cdpTransport) Run(_ context.Context, id string, input json.RawMessage) (json.RawMessage, error) {
	return t.with(func(ctx context.Context, tb *toolbar.CDP) (json.RawMessage, error) { return tb.Run(ctx, id, input) })
}
