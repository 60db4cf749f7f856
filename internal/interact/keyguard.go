package interact

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	dcdp "github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

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
	// lib calls the page-side library in the element's frame, post sends it
	// a call without waiting; unkept: the frame's document does not keep the
	// library, nor the guard with it, from one call to the next.
	lib    func(ctx context.Context, this string, req map[string]any, out any) error
	post   func(ctx context.Context, req map[string]any)
	unkept func() bool
	// field: objectId of the element to install the page-side guard on at
	// the first check; "" with id or, with neither, navigation only.
	field string
	id    int // the page-side guard, kept by the library (keepGuard)
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
	g.lib = func(ctx context.Context, this string, req map[string]any, out any) error {
		return p.callValue(ctx, f, this, req, out)
	}
	g.post = func(ctx context.Context, req map[string]any) { p.postLib(ctx, f, req) }
	g.unkept = func() bool { return f.libUnkept }
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
	if g.id == 0 {
		var kept keptGuard
		if err := g.lib(ctx, g.field, map[string]any{"op": "guard", "do": "on"}, &kept); err != nil {
			if isGone(err) {
				return "navigated"
			}
			return ""
		}
		if kept.ID == 0 {
			return kept.Why // input cannot start ("": the page broke the install)
		}
		g.id = kept.ID
		return "" // checked by the install
	}
	if g.fresh {
		g.fresh = false
		return "" // checked by the install, just before
	}
	var why string
	if err := g.lib(ctx, "", map[string]any{"op": "guard", "do": "check", "id": g.id}, &why); err != nil {
		if isGone(err) {
			return "navigated"
		}
		return ""
	}
	if why == "lost" {
		// The library no longer has it: another document, or one that does
		// not keep the library (then only navigation is guarded).
		if g.unkept() {
			return ""
		}
		return "navigated"
	}
	return why
}

// keptGuard is the library's answer to a key guard's install (keepGuard):
// its id, or why input cannot start, or that the page broke the install.
type keptGuard struct {
	ID    int    `json:"id"`
	Why   string `json:"why"`
	Threw bool   `json:"threw"`
}

// check is called before each input event: nil while the input may go on,
// else not-typed saying how much was typed of what.
func (g *keyGuard) check(ctx context.Context) error {
	if g == nil {
		return nil
	}
	if g.stopped() == "" && g.guardsField() {
		if why := g.query(ctx); why != "" {
			g.stop(why)
		}
	}
	if why := g.stopped(); why != "" {
		return errInputStopped{why}
	}
	return nil
}

// guardsField says whether the guard is over an element (else over
// navigation only).
func (g *keyGuard) guardsField() bool { return g.id != 0 || g.field != "" }

// count records one more character sent.
func (g *keyGuard) count() { g.countN(1) }

func (g *keyGuard) countN(n int) {
	if g != nil {
		g.typed += n
	}
}

// guardFocused guards the element that has the focus after out (a located
// element that the focus call with "guard" gave the focus), or, with nothing
// focused, the top document's navigation.
func (p *Page) guardFocused(ctx context.Context, out *outcome) (*keyGuard, error) {
	if out == nil {
		top, err := p.topFrame(ctx)
		if err != nil {
			return nil, err
		}
		return p.guardKeys(ctx, top, ""), nil
	}
	var r struct {
		Guard *keptGuard `json:"guard"`
	}
	json.Unmarshal(out.act, &r)
	return p.keptGuardOf(ctx, out.frame, r.Guard)
}

// keptGuardOf is the guard of f whose page-side install (keepGuard, in the
// call that focused the element or on its own) answered kept (nil: nothing
// had the focus).
func (p *Page) keptGuardOf(ctx context.Context, f *frame, kept *keptGuard) (*keyGuard, error) {
	g := p.guardKeys(ctx, f, "")
	switch {
	case kept == nil:
		// Nothing focused: the navigation guard only.
	case kept.Threw:
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
	case kept.ID != 0:
		g.id = kept.ID
		g.fresh = true
	case kept.Why != "":
		g.stop(kept.Why)
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
	if g.id != 0 {
		g.post(ctx, map[string]any{"op": "guard", "do": "end", "id": g.id})
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
