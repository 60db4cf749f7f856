package cdp

import (
	"context"
	"strings"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/output"
)

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload) a page
// opened, and what dtb did with it.
type Dialog struct {
	Type          string `json:"type"`
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt"`
	URL           string `json:"url,omitempty"`
	// Answer is how dtb answered it (accept or dismiss); "" when it was left
	// open.
	Answer string `json:"answer,omitempty"`
	// Text is the text a prompt was accepted with.
	Text string `json:"text,omitempty"`
	// Open: the dialog was still open when the command ended.
	Open bool `json:"open"`
	// By says who answered: "policy" (--dialog), "armed" (dtb dialog before
	// it opened), "read" (extract's dismiss-while-reading).
	By string `json:"by,omitempty"`
	// Browser: the browser keeps the dialog open after dtb detaches (Chrome
	// and Chromium do; the headless shell dismisses it when dtb detaches).
	Browser bool `json:"-"`
}

// DialogPolicy says how dialogs are answered: Answer "accept" or "dismiss",
// or "" to leave them open (and report them).
type DialogPolicy struct {
	Answer string `json:"answer"`
	Text   string `json:"text,omitempty"`
	// By is recorded in Dialog.By when the policy answers.
	By string `json:"-"`
	// Once: the policy answers one dialog only (an armed answer); Then is
	// the policy after it (nil: dialogs are left open).
	Once bool          `json:"-"`
	Then *DialogPolicy `json:"-"`
}

// ParseDialogAnswer validates --dialog (and dtb dialog's verb).
func ParseDialogAnswer(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return "", nil
	case "accept":
		return "accept", nil
	case "dismiss":
		return "dismiss", nil
	}
	return "", output.Usage("--dialog must be accept or dismiss, not %q", s)
}

// DialogOpenError is the dialog-open refusal of a command that met an open
// dialog: the page cannot run anything until it is answered.
func DialogOpenError(d *Dialog) *output.Error {
	e := output.Errorf("dialog-open", "the page has an open %s dialog %q: it blocks the page until answered; run the action again with --dialog accept|dismiss (or arm the answer first with 'dtb dialog accept|dismiss')", d.Type, d.Message).
		With("dialog", d)
	return e
}

// DialogWatch follows the dialogs a tab opens while a command runs and
// answers them by its policy.
type DialogWatch struct {
	page   *Page
	stop   func()
	mu     sync.Mutex
	policy DialogPolicy
	seen   []*Dialog
	opened chan struct{} // closed when a dialog is left open
	once   sync.Once
	done   chan struct{}
}

// WatchDialogs subscribes to the tab's dialogs and enables the Page domain
// (without waiting for its answer: a tab whose dialog is already open answers
// it only once the dialog closes). The browser handles a tab's commands in
// order, so every command sent after this one sees dialogs reported.
func (p *Page) WatchDialogs(ctx context.Context, policy DialogPolicy) *DialogWatch {
	ch, stop := On(p, page.JavascriptDialogOpening)
	w := &DialogWatch{page: p, stop: stop, policy: policy, opened: make(chan struct{}), done: make(chan struct{})}
	p.OncePerConn("page", func() error {
		Post(ctx, p, page.Enable, page.EnableParams{})
		return nil
	})
	go func() {
		defer close(w.done)
		for ev := range ch {
			w.handle(ctx, ev)
		}
	}()
	return w
}

// DialogOpened is the dialog of a Page.javascriptDialogOpening event; ok is
// false for any other event.
func DialogOpened(ev Event) (d *Dialog, ok bool) {
	e, ok := Decode(page.JavascriptDialogOpening, ev)
	if !ok {
		return nil, false
	}
	return &Dialog{Type: string(e.Type), Message: e.Message, DefaultPrompt: e.DefaultPrompt, URL: e.URL, Browser: e.HasBrowserHandler}, true
}

func (w *DialogWatch) handle(ctx context.Context, ev Event) {
	d, ok := DialogOpened(ev)
	if !ok {
		return
	}
	w.mu.Lock()
	pol := w.policy
	if pol.Once {
		w.policy = DialogPolicy{}
		if pol.Then != nil {
			w.policy = *pol.Then
		}
	}
	w.seen = append(w.seen, d)
	w.mu.Unlock()
	if pol.Answer != "" {
		// Within the command's deadline: a browser that does not answer must not
		// hold the command past --timeout (the dialog then counts as open).
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if text, err := w.page.AnswerDialog(cctx, d, pol.Answer, pol.Text); err == nil {
			w.mu.Lock()
			d.Answer, d.By, d.Text = pol.Answer, pol.By, text
			w.mu.Unlock()
			return
		}
	}
	w.mu.Lock()
	d.Open = true
	w.mu.Unlock()
	w.once.Do(func() { close(w.opened) })
}

// Opened is closed when a dialog opens and is left open.
func (w *DialogWatch) Opened() <-chan struct{} { return w.opened }

// Open is the dialog left open, or nil.
func (w *DialogWatch) Open() *Dialog {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.seen {
		if d.Open {
			c := *d
			return &c
		}
	}
	return nil
}

// Seen is every dialog of the command so far, in order.
func (w *DialogWatch) Seen() []Dialog {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Dialog, len(w.seen))
	for i, d := range w.seen {
		out[i] = *d
	}
	return out
}

// Last is the newest dialog of the command, or nil.
func (w *DialogWatch) Last() *Dialog {
	s := w.Seen()
	if len(s) == 0 {
		return nil
	}
	return &s[len(s)-1]
}

// Context is ctx ended (with DialogOpenError as its cause) as soon as a dialog
// is left open: every call still waiting on the blocked page returns.
func (w *DialogWatch) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(context.WithValue(ctx, dialogWatchKey{}, w))
	go func() {
		select {
		case <-w.opened:
			cancel(DialogOpenError(w.Open()))
		case <-cctx.Done():
		}
	}()
	return cctx, func() { cancel(context.Canceled) }
}

type dialogWatchKey struct{}

// DialogsOf is the dialog watch of a context made by DialogWatch.Context, or
// nil.
func DialogsOf(ctx context.Context) *DialogWatch {
	w, _ := ctx.Value(dialogWatchKey{}).(*DialogWatch)
	return w
}

// LeftOpen reports whether a dialog the watch of ctx follows was left open:
// the page is blocked on it, and an input that opened it has reached it.
func LeftOpen(ctx context.Context) bool {
	w := DialogsOf(ctx)
	return w != nil && w.Open() != nil
}

// Stop ends the watch.
func (w *DialogWatch) Stop() {
	w.stop()
	<-w.done
}

// AnswerDialog answers the tab's open dialog d (nil when dtb does not know
// it) with Page.handleJavaScriptDialog: accept or dismiss, a prompt accepted
// with text, else its default text. It returns the text a prompt got.
func (p *Page) AnswerDialog(ctx context.Context, d *Dialog, answer, text string) (string, error) {
	params := dialogAnswer{Accept: answer == "accept"}
	if answer == "accept" && (d == nil || d.Type == "prompt") {
		if text == "" && d != nil {
			text = d.DefaultPrompt
		}
		params.PromptText = &text
	} else {
		text = ""
	}
	_, err := proto.Call(ctx, p, handleDialog, params)
	return text, err
}

// handleDialog is page.HandleJavaScriptDialog with a prompt text that is sent
// even when empty: cdproto leaves "" out, and a prompt accepted without a
// text returns its default text, not the "" dtb reports.
var handleDialog = proto.Command[dialogAnswer, proto.Empty]{Method: page.HandleJavaScriptDialog.Method}

type dialogAnswer struct {
	Accept     bool    `json:"accept"`
	PromptText *string `json:"promptText,omitzero"`
}

// Responsive reports whether the tab's main thread answers a trivial
// evaluation within wait (false: a dialog or a busy script blocks it).
func (p *Page) Responsive(ctx context.Context, wait time.Duration) bool {
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := proto.Call(cctx, p, runtime.Evaluate, runtime.EvaluateParams{Expression: "1", ReturnByValue: new(true)})
	return err == nil || cctx.Err() == nil
}

// NavigationPending is the error of a command whose tab was held by a
// navigation whose server never answered; dtb stopped that load.
func NavigationPending(p *Page, cause error) *output.Error {
	return output.Errorf("navigation-pending", "the tab %s did not answer (%v): it was waiting for a navigation whose server never answered; dtb stopped that load, and the tab answers again", TabName(p.ID, p.Alias), cause).With("tab", p.ID).With("stopped", true)
}

// PageUnresponsive is the error of a command whose tab stopped answering.
func PageUnresponsive(p *Page, cause error) *output.Error {
	return output.Errorf("page-unresponsive", "the tab %s does not answer (%v): its main thread is blocked by a long-running script, or by a dialog that opened while no dtb command watched the tab", TabName(p.ID, p.Alias), cause).With("tab", p.ID)
}
