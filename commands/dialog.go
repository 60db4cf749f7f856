package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// probeWait is how long a tab gets to answer a trivial evaluation before it
// counts as blocked (by a dialog left open, or a busy script).
const probeWait = 500 * time.Millisecond

func init() {
	register(&cli.Command{
		Name:     "dialog",
		Category: catBrowser,
		Usage:    "show the tab's JavaScript dialog, or answer it: accept or dismiss",
		UsageText: `dtb dialog [ANSWER] [--text T]

Without ANSWER: whether the tab has a dialog open (its type, message and default
prompt), whether the page is blocked, and an armed answer. ANSWER is accept (a
prompt with --text T, else its default text) or dismiss (cancel).

An alert, confirm, prompt or beforeunload dialog blocks the page until it is
answered. A page command that opens one never hangs: with --dialog accept|dismiss
(DTB_DIALOG) it answers the dialog and goes on; without, it returns at once and
reports the dialog ("dialog": {type, message, defaultPrompt, open}), and the dialog
stays open where the browser keeps it (Chrome, Chromium: a later page command on
the tab fails dialog-open, exit 6, naming it; the headless shell dismisses it when
the command ends, and says so).

With no dialog open, accept and dismiss arm the answer: the next dialog the tab
opens during a dtb command is answered so, once. Arm it before the action that
opens the dialog. A dialog the browser keeps open after its command ended cannot
be answered by a later connection (the browser lets only the one that saw it open
answer it): accept and dismiss then fail dialog-stale; reload or close the tab.

Examples:
  dtb dialog accept --text 'Ada' && dtb click '#rename'
  dtb click '#delete' --dialog accept --jq .dialog
  dtb dialog --jq .open`,
		Flags: withBrowserFlags(
			&cli.StringFlag{Name: "text", Usage: "accept a prompt with `TEXT` (default: the prompt's default text)"},
		),
		Action: action(runDialog),
	})
}

// dialogFlag is the dialog policy of page commands.
func dialogFlag() cli.Flag {
	return &cli.StringFlag{Name: "dialog", Usage: "answer JavaScript dialogs (alert, confirm, prompt, beforeunload) the page opens: `ANSWER` accept or dismiss (default: leave the dialog open and report it)", EnvVars: []string{"DTB_DIALOG"}, Category: catBrowserFlags}
}

// pageFlags are the command's own flags, the dialog policy and the browser
// flags: the flags of a command that works in a page.
func pageFlags(own ...cli.Flag) []cli.Flag {
	return withBrowserFlags(append(own, dialogFlag())...)
}

// dialogResult is what dtb dialog prints.
type dialogResult struct {
	Tab    cdp.TabRef        `json:"tab"`
	Open   bool              `json:"open"`
	Dialog *cdp.Dialog       `json:"dialog"`
	Armed  *cdp.DialogPolicy `json:"armed"`
	// Blocked: the tab's main thread did not answer (a dialog or a busy
	// script).
	Blocked bool `json:"blocked"`
}

func runDialog(c *cli.Context, inv *invocation) (any, error) {
	verb := c.Args().First()
	if c.NArg() > 1 {
		return nil, output.Usage("dialog takes accept or dismiss, got %d arguments", c.NArg())
	}
	answer := ""
	if verb != "" {
		a, err := cdp.ParseDialogAnswer(verb)
		if err != nil {
			return nil, output.Usage("dialog takes accept or dismiss, not %q", verb)
		}
		answer = a
	}
	if c.IsSet("text") && answer != "accept" {
		return nil, output.Usage("--text goes with dialog accept")
	}
	return withTab(c, inv, func(ctx context.Context, sess *cdp.Session, p *cdp.Page) (any, error) {
		return answerDialog(ctx, c, sess, p, answer)
	})
}

// answerDialog is dtb dialog on tab p: what is open and armed, or answer
// (accept, dismiss) the open dialog or arm it for the next one.
func answerDialog(ctx context.Context, c *cli.Context, sess *cdp.Session, p *cdp.Page, answer string) (any, error) {
	res := &dialogResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}}
	rec := sess.State().Dialogs[p.ID]
	if rec != nil {
		res.Dialog, res.Armed = rec.Open, rec.Armed
	}
	res.Blocked = !p.Responsive(ctx, probeWait)
	if res.Dialog != nil && !res.Blocked {
		// It closed since (answered by hand, or the page went away).
		res.Dialog = nil
		clearDialog(ctx, sess, p.ID, false)
	}
	res.Open = res.Dialog != nil
	if answer == "" {
		return res, nil
	}
	if res.Open || res.Blocked {
		// Try anyway: a browser that lets a later connection answer would.
		if text, err := p.AnswerDialog(ctx, res.Dialog, answer, c.String("text")); err == nil {
			clearDialog(ctx, sess, p.ID, false)
			d := res.Dialog
			if d != nil {
				d.Open, d.Answer, d.Text = false, answer, text
			}
			return map[string]any{"tab": res.Tab, "answered": answer, "dialog": d}, nil
		}
		d := res.Dialog
		if d == nil {
			return nil, cdp.PageUnresponsive(p, errors.New("no dialog dtb knows of")).With("hint", "the page may be running a long script, or show a dialog that opened while no dtb command watched the tab")
		}
		return nil, output.Errorf("dialog-stale", "the %s dialog %q opened during an earlier command; the browser lets only the connection that saw a dialog open answer it, so dtb cannot answer it now: reload or close the tab, and next time arm the answer first (dtb dialog %s) or give the action --dialog %s", d.Type, d.Message, answer, answer).With("dialog", d).With("tab", p.ID)
	}
	pol := &cdp.DialogPolicy{Answer: answer, Text: c.String("text")}
	if err := sess.Update(ctx, func(st *cdp.State) error {
		td := tabDialog(st, p.ID)
		td.Open, td.Armed = nil, pol
		return nil
	}); err != nil {
		return nil, err
	}
	res.Armed = pol
	return res, nil
}

func tabDialog(st *cdp.State, id string) *cdp.TabDialog {
	if st.Dialogs == nil {
		st.Dialogs = map[string]*cdp.TabDialog{}
	}
	td := st.Dialogs[id]
	if td == nil {
		td = &cdp.TabDialog{}
		st.Dialogs[id] = td
	}
	return td
}

// clearDialog forgets the tab's open dialog (and, with armed, its armed
// answer).
func clearDialog(ctx context.Context, sess *cdp.Session, id string, armed bool) {
	sess.Update(ctx, func(st *cdp.State) error {
		if td := st.Dialogs[id]; td != nil {
			td.Open = nil
			if armed {
				td.Armed = nil
			}
			if td.Open == nil && td.Armed == nil {
				delete(st.Dialogs, id)
			}
		}
		return nil
	})
}

// dialogGuard is the dialog handling around one page command: a dialog an
// earlier command left open refuses the command at once (dialog-open); the
// dialogs the command meets are answered by the policy (--dialog, else an
// armed answer, else readDefault) or left open, ending the command promptly.
type dialogGuard struct {
	sess  *cdp.Session
	page  *cdp.Page
	w     *cdp.DialogWatch
	armed bool
	warn  func(reason, message string, details map[string]any)
}

// guardDialogs starts the guard on p. readDefault is the answer when neither
// --dialog nor an armed answer says one ("" leaves dialogs open).
func guardDialogs(ctx context.Context, c *cli.Context, inv *invocation, sess *cdp.Session, p *cdp.Page, readDefault, by string) (*dialogGuard, error) {
	answer, err := cdp.ParseDialogAnswer(c.String("dialog"))
	if err != nil {
		return nil, err
	}
	g := &dialogGuard{sess: sess, page: p, warn: inv.printer.Warn}
	pol := cdp.DialogPolicy{Answer: answer, By: "policy"}
	if answer == "" && readDefault != "" {
		pol = cdp.DialogPolicy{Answer: readDefault, By: by}
	}
	if rec := sess.State().Dialogs[p.ID]; rec != nil {
		if d := rec.Open; d != nil {
			if !p.Responsive(ctx, probeWait) {
				e := cdp.DialogOpenError(d)
				e.Message = fmt.Sprintf("the tab has an open %s dialog %q, left open by an earlier command: it blocks the page; dtb dialog shows it", d.Type, d.Message)
				return nil, e.With("tab", p.ID)
			}
			clearDialog(ctx, sess, p.ID, false)
		}
		if a := rec.Armed; a != nil && answer == "" {
			// Spent on one dialog; later ones get the command's default (a
			// read still dismisses them).
			then := pol
			pol = cdp.DialogPolicy{Answer: a.Answer, Text: a.Text, By: "armed", Once: true, Then: &then}
			g.armed = true
		}
	}
	g.w = p.WatchDialogs(ctx, pol)
	return g, nil
}

// finish records a dialog left open, spends an armed answer that answered,
// and maps the command's error: a dialog left open is dialog-open, a deadline
// on a tab that no longer answers is page-unresponsive. A dialog that the
// browser dismisses when dtb detaches (the headless shell) is reported so.
func (g *dialogGuard) finish(ctx context.Context, res any, err error) (any, error) {
	g.w.Stop()
	open := g.w.Open()
	last := g.w.Last()
	if g.armed {
		for _, d := range g.w.Seen() {
			if d.By == "armed" {
				clearDialog(ctx, g.sess, g.page.ID, true)
				break
			}
		}
	}
	if open != nil {
		if open.Browser {
			g.sess.Update(context.WithoutCancel(ctx), func(st *cdp.State) error {
				tabDialog(st, g.page.ID).Open = open
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
				e.With("dialog", open).With("tab", g.page.ID)
			}
			return nil, err
		}
		if ctx.Err() == context.DeadlineExceeded && !g.page.Responsive(context.WithoutCancel(ctx), probeWait) {
			return nil, cdp.PageUnresponsive(g.page, err)
		}
		return nil, err
	}
	if r, ok := res.(interface{ SetDialog(*cdp.Dialog) }); ok && last != nil {
		r.SetDialog(last)
	}
	return res, nil
}
