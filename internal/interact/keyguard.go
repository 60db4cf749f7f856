package interact

import (
	"context"
	_ "embed"
	"encoding/json"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	dcdp "github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/keyguard.js
var keyGuardJS string

// keyGuardActiveJS installs keyGuardJS on the focused element (through open
// shadow roots) of the document it is called on, or of the frame's document
// in an isolated world: one round trip where finding the element and
// installing on it took two. Null when nothing has the focus.
var keyGuardActiveJS = "function () {\n" +
	"const doc = this && this.nodeType === 9 ? this : document;\n" +
	"let el = doc.activeElement;\n" +
	"while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;\n" +
	"if (!el) return null;\n" +
	"return (" + keyGuardJS + "\n).call(el);\n}"

// keyGuard keeps input that takes more than one event inside the element
// it started in. Keys and text go to whatever document has the focus when
// the browser gets them, so a page that navigates or moves the focus while
// dtb types would get the rest of the text: the tail of a password could
// land in another origin's page.
//
// Before each event the guard asks the page-side guard (js/keyguard.js)
// whether the element still holds the focus; that guard also cancels a key
// that reaches another element of the document between the check and the
// event. A navigation of the element's frame or an ancestor stops input as
// soon as its event arrives: the events come before the navigation commits
// (it needs at least the network's answer), and each check is a round trip
// after them, so a key sent after a passed check goes to the document
// checked.
type keyGuard struct {
	sess *dcdp.Page // the element's frame session
	// field: objectId of the element, or (guardActive) of the guard
	// installed on the focused element; "" guards navigation only.
	field string
	obj   string // objectId of the page-side guard, once installed
	// fresh: the install checked, and nothing reached the page since: the
	// first input needs no check of its own.
	fresh  bool
	frames map[string]bool

	mu    sync.Mutex
	why   string // why input stopped; "" while it may go on
	stops []func()
	url   string // the document typed into
	typed int    // characters sent
}

// guardKeys starts a guard over field (an objectId in frame f) or, with an
// empty field, over the navigation of f only.
func (p *Page) guardKeys(ctx context.Context, f *frame, field string) *keyGuard {
	g := &keyGuard{sess: f.sess, field: field, frames: map[string]bool{}, url: f.url}
	for fr := f; fr != nil; fr = fr.parent {
		g.frames[fr.id] = true
	}
	g.listen(p.tab)
	if f.sess != p.tab {
		// An out-of-process frame reports its own navigations.
		g.listen(f.sess)
		dcdp.Post(ctx, f.sess, page.Enable, page.EnableParams{})
	}
	return g
}

// listen follows the navigations that replace a document of s.
func (g *keyGuard) listen(s *dcdp.Page) {
	for _, m := range []string{page.FrameStartedNavigating.Method, page.FrameRequestedNavigation.Method, page.FrameNavigated.Method, page.FrameDetached.Method} {
		ch, stop := s.Events(m)
		g.stops = append(g.stops, stop)
		go func() {
			for ev := range ch {
				if why := g.navigates(ev); why != "" {
					g.stop(why)
				}
			}
		}()
	}
}

// navigates says whether an event replaces a guarded frame's document.
func (g *keyGuard) navigates(ev dcdp.Event) string {
	guarded := func(id cdp.FrameID) bool { return g.frames[string(id)] }
	if e, ok := dcdp.Decode(page.FrameStartedNavigating, ev); ok {
		t := e.NavigationType
		if !guarded(e.FrameID) || t == page.FrameStartedNavigatingNavigationTypeSameDocument || t == page.FrameStartedNavigatingNavigationTypeHistorySameDocument {
			return ""
		}
	} else if e, ok := dcdp.Decode(page.FrameRequestedNavigation, ev); ok {
		if !guarded(e.FrameID) || (e.Disposition != "" && e.Disposition != page.ClientNavigationDispositionCurrentTab) {
			return ""
		}
	} else if e, ok := dcdp.Decode(page.FrameNavigated, ev); ok {
		if e.Frame == nil || !guarded(e.Frame.ID) {
			return ""
		}
	} else if e, ok := dcdp.Decode(page.FrameDetached, ev); ok {
		if !guarded(e.FrameID) {
			return ""
		}
		return "frame-detached"
	} else {
		return ""
	}
	return "navigated"
}

func (g *keyGuard) stop(why string) {
	g.mu.Lock()
	if g.why == "" {
		g.why = why
	}
	g.mu.Unlock()
}

// stopped is why input stopped, or "".
func (g *keyGuard) stopped() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}

// query installs the page-side guard on its first call and asks it
// whether input may go on: "" or why not. An error that is not the
// document's end is left to the input's own call to report.
func (g *keyGuard) query(ctx context.Context) string {
	if g.obj == "" {
		res, err := cdp.Call(ctx, g.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: keyGuardJS,
			ObjectID:            runtime.RemoteObjectID(g.field),
		})
		if err != nil {
			if isGone(err) {
				return "navigated"
			}
			return ""
		}
		if res.ExceptionDetails != nil || res.Result == nil {
			return ""
		}
		if res.Result.ObjectID == "" { // input cannot start: why
			var why string
			json.Unmarshal(res.Result.Value, &why)
			return why
		}
		g.obj = string(res.Result.ObjectID)
		return "" // checked by the install
	}
	if g.fresh {
		g.fresh = false
		return "" // checked by the install, just before
	}
	res, err := cdp.Call(ctx, g.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function () { return this.check(); }",
		ObjectID:            runtime.RemoteObjectID(g.obj),
		ReturnByValue:       new(true),
	})
	if err != nil {
		if isGone(err) {
			return "navigated"
		}
		return ""
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return ""
	}
	var why string
	json.Unmarshal(res.Result.Value, &why)
	return why
}

// check is called before each input event: nil while the input may go on,
// else not-typed saying how much was typed of what.
func (g *keyGuard) check(ctx context.Context) error {
	if g == nil {
		return nil
	}
	if g.stopped() == "" && g.field != "" {
		if why := g.query(ctx); why != "" {
			g.stop(why)
		}
	}
	if why := g.stopped(); why != "" {
		return errInputStopped{why}
	}
	return nil
}

// count records one more character sent.
func (g *keyGuard) count() { g.countN(1) }

func (g *keyGuard) countN(n int) {
	if g != nil {
		g.typed += n
	}
}

// guardFocused guards the element that has the focus after out (a located
// and focused element), or, with nothing focused, the top document's
// navigation.
func (p *Page) guardFocused(ctx context.Context, out *outcome) (*keyGuard, error) {
	if out == nil {
		top, err := p.topFrame(ctx)
		if err != nil {
			return nil, err
		}
		return p.guardKeys(ctx, top, ""), nil
	}
	return p.guardActive(ctx, out.frame)
}

// guardActive guards the element that has the focus in frame f, installing
// the page-side guard on it at once (its first check is the install's), or,
// with nothing focused, f's navigation only. The guard's field is then its
// page-side object, through which the element is read back (readBack).
func (p *Page) guardActive(ctx context.Context, f *frame) (*keyGuard, error) {
	params := runtime.CallFunctionOnParams{FunctionDeclaration: keyGuardActiveJS}
	f.aim(&params, "")
	res, err := cdp.Call(ctx, f.sess, runtime.CallFunctionOn, params)
	if err != nil {
		if isGone(err) {
			return nil, p.gone(f, err)
		}
		return nil, wrapCDP(ctx, err)
	}
	g := p.guardKeys(ctx, f, "")
	switch r := res.Result; {
	case res.ExceptionDetails != nil:
		// A page that broke the install: the element is found as before,
		// and guarded, typed into and read back by its own object (the
		// install is tried again at the first check).
		el, err := p.call(ctx, f, "", map[string]any{"op": "activeElement"}, byObject)
		if err != nil {
			g.end(ctx)
			return nil, err
		}
		if el.Subtype == "node" {
			g.field = el.ObjectID
		}
	case r == nil || r.Subtype == "null":
		// Nothing focused: the navigation guard only.
	case r.ObjectID != "":
		g.obj = string(r.ObjectID)
		g.field = g.obj
		g.fresh = true
	default:
		var why string
		json.Unmarshal(r.Value, &why)
		if why != "" {
			g.stop(why)
		}
	}
	return g, nil
}

// held says, without a round trip, whether input may go on: for the later
// events of one chord, which follow a check at once.
func (g *keyGuard) held() error {
	if g == nil {
		return nil
	}
	if why := g.stopped(); why != "" {
		return errInputStopped{why}
	}
	return nil
}

// end removes the page-side guard (not waited for: the tab handles its
// commands in order, and a blocked page must not hold the command).
func (g *keyGuard) end(ctx context.Context) {
	if g == nil {
		return
	}
	if g.obj != "" {
		dcdp.Post(context.WithoutCancel(ctx), g.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function () { this.end(); }",
			ObjectID:            runtime.RemoteObjectID(g.obj),
		})
	}
	for _, s := range g.stops {
		s()
	}
}

// errInputStopped is a guard's refusal, turned into not-typed by the action
// that knows what it was typing.
type errInputStopped struct{ why string }

func (e errInputStopped) Error() string { return "input stopped: " + e.why }

// inputStopped maps a guard's refusal to not-typed: what was typed of what,
// into which element and document, and why the rest was not.
func inputStopped(err error, el *Element, g *keyGuard, typed, total int) error {
	s, ok := err.(errInputStopped)
	if !ok {
		return err
	}
	why := map[string]string{
		"navigated":      "the page navigated",
		"frame-detached": "its frame went away",
		"detached":       "the element left the page",
		"focus-moved":    "the focus moved elsewhere",
	}[s.why]
	e := output.Errorf("not-typed", "input into %s stopped after %d of %d characters: %s; the rest was not sent", describeEl(el), typed, total, why).
		With("element", el).With("typed", typed).With("chars", total).With("stopped", s.why)
	if g != nil && g.url != "" {
		e.With("url", g.url)
	}
	return e
}
