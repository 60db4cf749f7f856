package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// DialogProbeWait is how long a tab gets to answer a trivial evaluation
// before it counts as blocked (by a dialog left open, or a busy script).
const DialogProbeWait = 500 * time.Millisecond

// DialogStatus is what dtb dialog prints.
type DialogStatus struct {
	Tab    cdp.TabRef        `json:"tab"`
	Open   bool              `json:"open"`
	Dialog *cdp.Dialog       `json:"dialog"`
	Armed  *cdp.DialogPolicy `json:"armed"`
	// Blocked: the tab's main thread did not answer (a dialog or a busy
	// script).
	Blocked bool `json:"blocked"`
}

// DialogAnswered is what dtb dialog prints when it answered an open dialog.
type DialogAnswered struct {
	Tab      cdp.TabRef  `json:"tab"`
	Answered string      `json:"answered"`
	Dialog   *cdp.Dialog `json:"dialog"`
}

// AnswerTabDialog is dtb dialog on tab p: with answer "", what is open and
// armed; else answer (accept, dismiss; text for a prompt) the open dialog, or
// arm the answer for the tab's next dialog when none is open.
func (s *Session) AnswerTabDialog(ctx context.Context, p *cdp.Page, answer, text string) (any, error) {
	res := &DialogStatus{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}}
	if rec := s.State().Dialogs[p.ID]; rec != nil {
		res.Dialog, res.Armed = rec.Open, rec.Armed
	}
	res.Blocked = !p.Responsive(ctx, DialogProbeWait)
	if res.Dialog != nil && !res.Blocked {
		// It closed since (answered by hand, or the page went away).
		res.Dialog = nil
		s.clearDialog(ctx, p.ID, false)
	}
	res.Open = res.Dialog != nil
	if answer == "" {
		return res, nil
	}
	if res.Open || res.Blocked {
		// Try anyway: a browser that lets a later connection answer would.
		if got, err := p.AnswerDialog(ctx, res.Dialog, answer, text); err == nil {
			s.clearDialog(ctx, p.ID, false)
			d := res.Dialog
			if d != nil {
				d.Open, d.Answer, d.Text = false, answer, got
			}
			return &DialogAnswered{Tab: res.Tab, Answered: answer, Dialog: d}, nil
		}
		d := res.Dialog
		if d == nil {
			return nil, cdp.PageUnresponsive(p, errors.New("no dialog dtb knows of")).With("hint", "the page may be running a long script, or show a dialog that opened while no dtb command watched the tab")
		}
		return nil, output.Errorf("dialog-stale", "the %s dialog %q opened during an earlier command; the browser lets only the connection that saw a dialog open answer it, so dtb cannot answer it now: reload or close the tab, and next time arm the answer first (dtb dialog %s) or give the action --dialog %s", d.Type, d.Message, answer, answer).With("dialog", d).With("tab", p.ID)
	}
	pol := &cdp.DialogPolicy{Answer: answer, Text: text}
	if err := s.Update(ctx, func(st *State) error {
		td := tabDialog(st, p.ID)
		td.Open, td.Armed = nil, pol
		return nil
	}); err != nil {
		return nil, err
	}
	res.Armed = pol
	return res, nil
}

// NoteDialog records the dialog the tab just opened (d) or that it closed
// (nil), as the session host sees them, between commands too. answer, when
// not nil, may answer d at once: the tab's armed answer (a dtb dialog
// accept|dismiss given before it opened) is spent on it, as a command's
// guard would have; else d is recorded as open.
func (s *Session) NoteDialog(ctx context.Context, id string, d *cdp.Dialog, answer func(answer, text string) error) {
	rec := s.State().Dialogs[id]
	if d == nil {
		if rec != nil && rec.Open != nil {
			s.clearDialog(ctx, id, false)
		}
		return
	}
	if rec != nil && rec.Armed != nil && answer != nil {
		if answer(rec.Armed.Answer, rec.Armed.Text) == nil {
			s.clearDialog(ctx, id, true)
			return
		}
	}
	s.Update(ctx, func(st *State) error {
		tabDialog(st, id).Open = d
		return nil
	})
}

// empty: the record holds nothing (it is dropped).
func (td *TabDialog) empty() bool { return td.Open == nil && td.Armed == nil && !td.Busy }

func tabDialog(st *State, id string) *TabDialog {
	if st.Dialogs == nil {
		st.Dialogs = map[string]*TabDialog{}
	}
	td := st.Dialogs[id]
	if td == nil {
		td = &TabDialog{}
		st.Dialogs[id] = td
	}
	return td
}

// clearDialog forgets the tab's open dialog (and, with armed, its armed
// answer).
func (s *Session) clearDialog(ctx context.Context, id string, armed bool) {
	s.Update(ctx, func(st *State) error {
		if td := st.Dialogs[id]; td != nil {
			td.Open = nil
			if armed {
				td.Armed = nil
			}
			if td.empty() {
				delete(st.Dialogs, id)
			}
		}
		return nil
	})
}

// RefuseBusy fails page-unresponsive within DialogProbeWait when an earlier
// command left the tab busy (its main thread did not answer at that
// command's deadline) and it still does not answer: a command on a tab held
// by an endless script would otherwise wait out its whole --timeout. A tab
// that answers again is no longer counted busy. dtb wait does not call it
// (waiting for the page is what it is for), nor do navigations (one to
// another site leaves the busy page: its document gets a new renderer).
func (s *Session) RefuseBusy(ctx context.Context, p *cdp.Page) error {
	if rec := s.State().Dialogs[p.ID]; rec == nil || !rec.Busy {
		return nil
	}
	if !p.Responsive(ctx, DialogProbeWait) {
		return cdp.PageUnresponsive(p, errors.New("still busy since an earlier command")).
			With("hint", "a script of the page's keeps its main thread busy: dtb wait waits for it, dtb close closes the tab")
	}
	s.Update(ctx, func(st *State) error {
		if td := st.Dialogs[p.ID]; td != nil {
			td.Busy = false
			if td.empty() {
				delete(st.Dialogs, p.ID)
			}
		}
		return nil
	})
	return nil
}

// DialogGuard is the dialog handling around one page command: a dialog an
// earlier command left open refuses the command at once (dialog-open); the
// dialogs the command meets are answered by the policy (--dialog, else an
// armed answer, else the guard's default) or left open, ending the command
// promptly.
type DialogGuard struct {
	Watch *cdp.DialogWatch
	Page  *cdp.Page
	// StopScript: the command runs the user's own script (eval); one still
	// running when the deadline passes is stopped
	// (Runtime.terminateExecution), so the tab answers again.
	StopScript bool
	sess       *Session
	armed      bool
}

// GuardDialogs starts the guard on p. answer is the command's --dialog ("" for
// none); readDefault, said to be by by, is the answer when neither it nor an
// armed answer gives one ("" leaves dialogs open).
func (s *Session) GuardDialogs(ctx context.Context, p *cdp.Page, answer, readDefault, by string) (*DialogGuard, error) {
	g := &DialogGuard{sess: s, Page: p}
	pol := cdp.DialogPolicy{Answer: answer, By: "policy"}
	if answer == "" && readDefault != "" {
		pol = cdp.DialogPolicy{Answer: readDefault, By: by}
	}
	if rec := s.State().Dialogs[p.ID]; rec != nil {
		if d := rec.Open; d != nil {
			if !p.Responsive(ctx, DialogProbeWait) {
				e := cdp.DialogOpenError(d)
				e.Message = fmt.Sprintf("the tab has an open %s dialog %q, opened during or after an earlier command: it blocks the page until answered (dtb dialog accept|dismiss)", d.Type, d.Message)
				return nil, e.With("tab", p.ID)
			}
			s.clearDialog(ctx, p.ID, false)
		}
		if a := rec.Armed; a != nil && answer == "" {
			// Spent on one dialog; later ones get the command's default (a
			// read still dismisses them).
			then := pol
			pol = cdp.DialogPolicy{Answer: a.Answer, Text: a.Text, By: "armed", Once: true, Then: &then}
			g.armed = true
		}
	}
	g.Watch = p.WatchDialogs(ctx, pol)
	return g, nil
}

// Run runs fn under the guard; fn's context ends as soon as a dialog is left
// open.
func (g *DialogGuard) Run(ctx context.Context, fn func(ctx context.Context) (any, error)) (any, error) {
	dctx, cancel := g.Watch.Context(ctx)
	defer cancel()
	res, err := fn(dctx)
	return g.Finish(ctx, res, err)
}

// Finish records a dialog left open, spends an armed answer that answered,
// and maps the command's error: a dialog left open is dialog-open, a deadline
// on a tab that no longer answers is page-unresponsive. A dialog that the
// browser dismisses when dtb detaches (the headless shell) is reported so.
func (g *DialogGuard) Finish(ctx context.Context, res any, err error) (any, error) {
	g.Watch.Stop()
	open := g.Watch.Open()
	last := g.Watch.Last()
	if g.armed {
		for _, d := range g.Watch.Seen() {
			if d.By == "armed" {
				g.sess.clearDialog(ctx, g.Page.ID, true)
				break
			}
		}
	}
	if open != nil {
		// A browser dialog, or any dialog on a tab the session host stays
		// connected to, stays open for a later dtb dialog to answer.
		if open.Browser || g.Page.Kept() {
			g.sess.Update(context.WithoutCancel(ctx), func(st *State) error {
				tabDialog(st, g.Page.ID).Open = open
				return nil
			})
		} else {
			// The headless shell has no dialog of its own: it dismisses the
			// dialog when dtb detaches.
			open.Open, open.Answer, open.By = false, "dismiss", "browser"
			if last != nil && last.Open {
				last = open
			}
		}
	}
	if err != nil {
		if open != nil {
			var oe *output.Error
			if !errors.As(err, &oe) || oe.Reason != "dialog-open" {
				err = cdp.DialogOpenError(open)
			}
			if e, ok := err.(*output.Error); ok {
				e.With("dialog", open).With("tab", g.Page.ID)
			}
			return nil, err
		}
		if ctx.Err() == context.DeadlineExceeded && !g.Page.Responsive(context.WithoutCancel(ctx), DialogProbeWait) {
			if open == nil && g.Page.UnstuckByStop(ctx, DialogProbeWait/2) {
				return nil, cdp.NavigationPending(g.Page, err)
			}
			if open == nil && g.StopScript && g.Page.UnstuckByTerminate(ctx, DialogProbeWait/2) {
				return nil, output.Wrap("timeout", err, "the script was still running when --timeout passed; dtb stopped it, and the tab answers again").
					With("terminated", true).With("tab", g.Page.ID)
			}
			g.sess.Update(context.WithoutCancel(ctx), func(st *State) error {
				tabDialog(st, g.Page.ID).Busy = true
				return nil
			})
			return nil, cdp.PageUnresponsive(g.Page, err)
		}
		return nil, err
	}
	if r, ok := res.(interface{ SetDialog(*cdp.Dialog) }); ok && last != nil {
		r.SetDialog(last)
	}
	return res, nil
}

// OpenGuarded is OpenURL under the dialog guard of the tab, answer being the
// command's --dialog: a page that opens a dialog while it loads ends the wait
// at once (the navigation happened) and the dialog is reported, or answered
// by the policy.
func (s *Session) OpenGuarded(ctx context.Context, o OpenOptions, answer string) (any, error) {
	var g *DialogGuard
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prepare := o.Prepare
	o.Prepare = func(pctx context.Context, p *cdp.Page) error {
		var err error
		if g, err = s.GuardDialogs(ctx, p, answer, "", ""); err != nil {
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
	res, err := s.OpenURL(dctx, o)
	if g == nil {
		return res, err
	}
	if err != nil && g.Watch.Open() != nil {
		// The navigation committed: its page opened the dialog while loading.
		res = &OpenResult{Tab: cdp.TabRef{ID: g.Page.ID, Alias: g.Page.Alias}, URL: g.Watch.Open().URL, NewTab: !o.Current && o.Tab == ""}
		err = nil
	}
	return g.Finish(ctx, res, err)
}
