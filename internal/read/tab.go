package read

import (
	"context"
	"fmt"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/session"
)

// TabOptions say which tab ReadTab reads: Open.URL, when set, is opened first
// (as Open says; its Wait, Keep and Prepare are ReadTab's), else the tab Tab
// picks. Dialog is the command's --dialog answer ("" for none).
type TabOptions struct {
	Open   session.OpenOptions
	Tab    session.TabSelector
	Dialog string
}

// ReadTab reads a tab as `dtb extract` does, under the dialog guard of a read:
// dialogs are dismissed unless Dialog (or an armed answer) says otherwise,
// because reading must not be blocked; each dialog met is a warning.
func ReadTab(ctx context.Context, sess *session.Session, t TabOptions, o Options, warn func(reason, message string, details map[string]any)) (*Result, error) {
	var status *int
	var p *cdp.Page
	var g *session.DialogGuard
	guard := func(ctx context.Context, p *cdp.Page) (err error) {
		g, err = sess.GuardDialogs(ctx, p, t.Dialog, "dismiss", "read")
		return err
	}
	if t.Open.URL != "" {
		open := t.Open
		open.Wait, open.Keep = cdp.WaitNone, true
		// Dialogs are watched from before the navigation: an alert while
		// loading is answered as it opens.
		open.Prepare = func(ctx context.Context, tab *cdp.Page) error {
			if err := guard(ctx, tab); err != nil {
				return err
			}
			return AddTracker(ctx, tab)
		}
		opened, err := sess.OpenURL(ctx, open)
		if err != nil {
			if g != nil {
				g.Watch.Stop()
			}
			return nil, err
		}
		status = opened.Status
		p = opened.Page
	} else {
		var err error
		if p, err = sess.Page(ctx, t.Tab); err != nil {
			return nil, err
		}
		// A navigation may leave a busy page (to another site it does):
		// only a read of the tab as it is refuses one.
		if err = sess.RefuseBusy(ctx, p); err != nil {
			p.Close()
			return nil, err
		}
		if err = guard(ctx, p); err != nil {
			p.Close()
			return nil, err
		}
	}
	defer p.Close()
	dctx, cancel := g.Watch.Context(ctx)
	defer cancel()
	res, err := Read(dctx, p, o, warn)
	if _, err := g.Finish(ctx, nil, err); err != nil {
		return nil, err
	}
	for _, d := range g.Watch.Seen() {
		w := fmt.Sprintf("the page opened a %s dialog %q while it was read", d.Type, d.Message)
		switch {
		case d.Answer != "":
			w += fmt.Sprintf("; dtb answered it: %s", d.Answer)
		case d.Open:
			w += "; it is still open"
		}
		res.Warnings = append(res.Warnings, w)
		warn("dialog", w, map[string]any{"dialog": d})
	}
	res.Tab = &cdp.TabRef{ID: p.ID, Alias: p.Alias}
	res.Status = status
	return res, nil
}
