package interact

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// InputMode is how clicks and typing reach the page.
type InputMode string

const (
	// InputCDP sends real input events through the protocol (the default).
	InputCDP InputMode = "cdp"
	// InputDOM dispatches synthetic DOM events from the page (--input-mode dom).
	InputDOM InputMode = "dom"
)

// ParseInputMode validates --input-mode.
func ParseInputMode(s string) (InputMode, error) {
	switch InputMode(strings.ToLower(s)) {
	case "", InputCDP:
		return InputCDP, nil
	case InputDOM:
		return InputDOM, nil
	}
	return "", output.Usage("--input-mode must be cdp or dom, not %q", s)
}

// Settle says how long to watch the page after an action.
type Settle struct {
	// Quiet is how long the DOM must stay unchanged (0: do not wait).
	Quiet time.Duration
	// Cap bounds the whole wait; reaching it is reported, never a failure.
	Cap time.Duration
	// Frames, when > 0, ends the quiet wait early once the DOM has stayed
	// unchanged across this many consecutive animation frames: with no
	// navigation pending and no fetch/XHR in flight, the page is demonstrably
	// idle.
	Frames int
}

// DefaultSettle waits until the page is idle (two animation frames without a
// DOM change, or one when the page asked for no frame, then its main thread
// idle; no navigation pending, no fetch/XHR in flight), at most 50 ms of DOM
// quiet, within at most 1 s.
var DefaultSettle = Settle{Quiet: 50 * time.Millisecond, Cap: time.Second, Frames: 2}

// After is what happened after an action.
type After struct {
	// Navigated: a navigation of the main frame started.
	Navigated bool `json:"navigated"`
	// Committed: it committed (the new document replaced the old one).
	Committed bool `json:"committed,omitempty"`
	// SameDocument: the URL changed without a new document (history API).
	SameDocument bool   `json:"sameDocument,omitempty"`
	URL          string `json:"url"`
	// QuietMs: how long after the action the DOM went quiet; Quiet is false
	// when it was still changing at the cap.
	QuietMs int  `json:"quietMs"`
	Quiet   bool `json:"quiet"`
	// Settling: the action started no navigation and no request, and the
	// answer came before the page went quiet; the session host waits for
	// that (as the settle would have) before the next command on the tab.
	Settling bool `json:"settling,omitempty"`
	// Ms: the whole action, locate to settled.
	Ms int64 `json:"ms"`
}

// Result is what every action prints: the element it acted on and what
// happened after, plus the action's own facts.
type Result struct {
	Action  string         `json:"action"`
	Element *Element       `json:"element,omitempty"`
	Facts   map[string]any `json:"-"`
	After   *After         `json:"after,omitempty"`
}

// MarshalJSON puts the facts beside action, element and after.
func (r Result) MarshalJSON() ([]byte, error) {
	m := map[string]any{"action": r.Action}
	if r.Element != nil {
		m["element"] = r.Element
	}
	if r.After != nil {
		m["after"] = r.After
	}
	for k, v := range r.Facts {
		m[k] = v
	}
	return json.Marshal(m)
}

// SetDialog reports the dialog the action opened.
func (r *Result) SetDialog(d *cdp.Dialog) { r.set("dialog", d) }

func (r *Result) set(k string, v any) {
	if r.Facts == nil {
		r.Facts = map[string]any{}
	}
	r.Facts[k] = v
}

// ClickOptions configure Click and Hover.
type ClickOptions struct {
	Button    string // left (default), right, middle
	Count     int    // 2 for a double click
	Modifiers int    // ModAlt|ModCtrl|ModMeta|ModShift
	Force     bool   // skip the covered check
	Mode      InputMode
	Settle    Settle
	// chooser: the file-chooser interception of an Upload that clicks; nil
	// for a plain click, which intercepts (and reports) on its own.
	chooser *chooserWatch
	// DownloadDir, when set, is where a download the click starts is saved
	// (and reported as "download"); "" leaves downloads to the browser.
	DownloadDir string
}

var buttons = map[string]struct {
	index, mask int
}{"left": {0, 1}, "right": {2, 2}, "middle": {1, 4}}

// Click scrolls the element into view and clicks its visible centre with real
// mouse events (after checking nothing covers it), or with synthetic DOM
// events in InputDOM mode.
func (p *Page) Click(ctx context.Context, loc Locator, o ClickOptions) (*Result, error) {
	return p.mouseAction(ctx, "click", loc, o)
}

// Hover moves the mouse over the element's visible centre.
func (p *Page) Hover(ctx context.Context, loc Locator, o ClickOptions) (*Result, error) {
	return p.mouseAction(ctx, "hover", loc, o)
}

func (p *Page) mouseAction(ctx context.Context, kind string, loc Locator, o ClickOptions) (*Result, error) {
	start := time.Now()
	if o.Button == "" {
		o.Button = "left"
	}
	b, ok := buttons[o.Button]
	if !ok {
		return nil, output.Usage("--button must be left, right or middle, not %q", o.Button)
	}
	if o.Mode == "" {
		o.Mode = InputCDP
	}
	if o.Count <= 0 {
		o.Count = 1
	}
	if o.Count > 3 {
		return nil, output.Usage("--count is 1, 2 (double click) or 3")
	}
	w := p.watch(ctx)
	defer w.stop()
	var a action
	if o.Mode == InputDOM {
		a = action{"kind": "domclick", "count": o.Count, "buttonIndex": b.index, "modifiers": o.Modifiers, "hover": kind == "hover"}
	} else {
		a = action{"kind": "point", "force": o.Force, "click": kind == "click"}
	}
	// A click that opens a file chooser says so; intercepted, no native
	// dialog is left waiting. (A synthetic click has no user activation: it
	// opens no chooser.)
	var cw *chooserWatch
	var res *Result
	if kind == "click" && o.chooser == nil && o.Mode != InputDOM {
		cw = p.watchChooser(ctx)
		defer func() { p.reportChooser(ctx, cw, loc, res) }()
	}
	out, err := p.act(ctx, loc, needVisible, a)
	if err != nil {
		if o.Mode == InputDOM {
			// The synthetic click ran the page's handler, which opened a dialog.
			return dialogCut(ctx, err, &Result{Action: kind, Facts: map[string]any{"input": string(o.Mode)}}, start)
		}
		return nil, err
	}
	var pt struct {
		X, Y     float64
		Download bool           // a download link
		Clicks   *browserClicks // the document's clicks on file inputs and download links before this one
	}
	json.Unmarshal(out.act, &pt)
	res = &Result{Action: kind, Element: out.Element}
	if cw != nil {
		if err := cw.add(ctx, out.frame.sess); err != nil {
			return nil, err
		}
	}
	var dw *downloadWatch
	if kind == "click" && o.DownloadDir != "" {
		if dw = p.watchDownloads(ctx, o.DownloadDir); dw != nil {
			defer dw.stop() // also when the click fails
		}
	}
	res.set("point", []int{round(pt.X), round(pt.Y)})
	res.set("input", string(o.Mode))
	if o.Mode != InputDOM {
		if err := w.ready(ctx); err != nil {
			return nil, err
		}
		// The move and each press and release go out at once and cost one
		// round trip: the browser handles a tab's input events in order.
		cmds := []cdp.Cmd{mouseCmd("mouseMoved", pt.X, pt.Y, "none", 0, 0, o.Modifiers)}
		if kind == "click" {
			for i := 1; i <= o.Count; i++ {
				cmds = append(cmds, mouseCmd("mousePressed", pt.X, pt.Y, o.Button, b.mask, i, o.Modifiers),
					mouseCmd("mouseReleased", pt.X, pt.Y, o.Button, 0, i, o.Modifiers))
			}
		}
		if err := p.tab.Pipeline(ctx, cmds...); err != nil {
			return dialogCut(ctx, wrapCDP(ctx, err), res, start)
		}
	}
	if kind == "click" {
		if o.Button != "left" {
			res.set("button", o.Button)
		}
		if o.Count > 1 {
			res.set("count", o.Count)
		}
	}
	res.After = w.settle(ctx, o.Settle, start)
	// The browser reports what a click on a file input or a download link
	// starts in its own time, which can be after the settle (and is, under
	// load, after the quick answer of a settle handed to the host): when the
	// page saw such a click, its report is waited for (it comes at once).
	var late browserClicks
	if w.glanced != nil && w.glanced.Clicks != nil && pt.Clicks != nil {
		late = browserClicks{w.glanced.Clicks.Files - pt.Clicks.Files, w.glanced.Clicks.Downloads - pt.Clicks.Downloads}
	}
	if cw != nil && late.Files > 0 {
		cw.await(ctx, chooserGrace)
	}
	if dw != nil {
		// Only a download link, or a navigation that never committed, can
		// still start a download: other clicks pay nothing. A download link
		// that navigated instead (the browser ignores download on another
		// origin's URL) has nothing left to wait for.
		navigated := res.After != nil && res.After.Navigated
		committed := navigated && res.After.Committed
		grace := time.Duration(0)
		switch {
		case (pt.Download || late.Downloads > 0) && !committed:
			grace = downloadLinkGrace
		case navigated && !committed:
			grace = downloadGrace
		}
		if d := dw.collect(ctx, grace); d != nil {
			res.set("download", d)
		}
	}
	return res, nil
}

// downloadGrace is how long after its settle a click may still start a
// download: the response that turns a link's navigation into one.
const downloadGrace = 150 * time.Millisecond

// downloadLinkGrace is downloadGrace for a click on a download link, whose
// download begins as soon as its response does (on a loaded machine, after
// the settle); the wait ends when it begins.
const downloadLinkGrace = 2 * time.Second

// dialogCut ends an action whose input opened a dialog that was left open
// (the policy of the command's dialog watch): the input reached the page and
// the dialog is its effect, so the action succeeded; the page is blocked, so
// nothing more is read from it.
func dialogCut(ctx context.Context, err error, res *Result, start time.Time) (*Result, error) {
	if err != nil && cdp.LeftOpen(ctx) {
		res.After = &After{Ms: time.Since(start).Milliseconds()}
		return res, nil
	}
	return nil, err
}

func (p *Page) mouse(ctx context.Context, typ string, x, y float64, button string, buttonsMask, count, mods int) error {
	if _, err := proto.Call(ctx, p.tab, input.DispatchMouseEvent, mouseParams(typ, x, y, button, buttonsMask, count, mods)); err != nil {
		return wrapCDP(ctx, err)
	}
	return nil
}

// mouseCmd is one Input.dispatchMouseEvent of a Pipeline.
func mouseCmd(typ string, x, y float64, button string, buttonsMask, count, mods int) cdp.Cmd {
	return cdp.Command(input.DispatchMouseEvent, mouseParams(typ, x, y, button, buttonsMask, count, mods), nil)
}

// mouseParams: zero modifiers, buttons and click count are left out, each
// the protocol's default.
func mouseParams(typ string, x, y float64, button string, buttonsMask, count, mods int) input.DispatchMouseEventParams {
	params := input.DispatchMouseEventParams{Type: input.DispatchMouseEventType(typ), X: x, Y: y, Modifiers: int64(mods), Button: input.MouseButton(button), Buttons: int64(buttonsMask)}
	if count > 0 {
		params.ClickCount = int64(count)
	}
	return params
}

// TypeOptions configure Type.
type TypeOptions struct {
	Keys   bool // real key events per character instead of Input.insertText
	Clear  bool // replace the current content
	Submit bool // press Enter afterwards
	Mode   InputMode
	Settle Settle
}

// Type focuses the element (or, with an empty locator, keeps the focused one)
// and inserts text through the protocol.
func (p *Page) Type(ctx context.Context, loc Locator, text string, o TypeOptions) (*Result, error) {
	start := time.Now()
	if o.Mode == "" {
		o.Mode = InputCDP
	}
	w := p.watch(ctx)
	defer w.stop()
	res := &Result{Action: "type"}
	var submitGuard *keyGuard // the Enter of --submit goes where the text went
	if o.Mode == InputDOM {
		if loc.Empty() {
			return nil, output.Usage("--input-mode dom needs a locator")
		}
		out, err := p.act(ctx, loc, needVisible, action{"kind": "domtype", "text": text, "clear": o.Clear})
		if err != nil {
			return nil, err
		}
		if err := actError(out, "type into"); err != nil {
			return nil, err
		}
		res.Element = out.Element
		if err := checkTyped(out.Element, out.act, res); err != nil {
			return nil, err
		}
	} else {
		var out *outcome
		var err error
		a := action{"kind": "focus", "clear": o.Clear, "typing": true, "text": text, "keys": o.Keys, "guard": true}
		var ahead *readAhead
		if text != "" && !o.Keys {
			if ahead = p.readBackAhead(ctx); ahead != nil {
				a["readback"] = ahead.token
				defer ahead.drop(ctx, p)
			}
		}
		if loc.Empty() {
			out, err = p.onFocused(ctx, a)
		} else {
			out, err = p.act(ctx, loc, needVisible, a)
		}
		if err != nil {
			return nil, err
		}
		var f focusRes
		json.Unmarshal(out.act, &f)
		res.Element = out.Element
		if f.Error == "not-editable" {
			return nil, notEditable(out.Element, f.Why, f.Format)
		}
		if !f.Focused {
			return nil, output.Errorf("not-interactable", "%s did not take the focus", describeEl(out.Element)).With("element", out.Element)
		}
		if err := w.ready(ctx); err != nil {
			return nil, err
		}
		// The element that took the focus is the one typed into and read
		// back: from here on every input event goes to this field of this
		// document, or none does (keyGuard). The focus call installed the
		// page-side guard on it.
		guard, err := p.keptGuardOf(ctx, out.frame, f.Guard)
		if err != nil {
			return nil, err
		}
		defer guard.end(ctx)
		submitGuard = guard
		want := f.Want
		// The read-back of a field whose guard the library keeps waits
		// page-side for the text (readBackAfter): the one sent ahead of the
		// focus call when that call ran in the top document, else one sent
		// now, before the text.
		var pending *pendingReadBack
		if f.Field && guard.id != 0 && !out.frame.libUnkept && !f.ByValue && text != "" && !o.Keys {
			if ahead != nil && ahead.f == out.frame {
				pending = ahead.take()
			} else if pending, err = p.beginReadBack(ctx, out, guard, want, f.CE, f.Loose); err != nil {
				return nil, err
			}
		}
		var inserted func() error
		if !f.ByValue {
			wait, err := p.insert(ctx, text, o, f, guard)
			if err == nil && wait != nil {
				if pending != nil {
					inserted = wait
				} else {
					err = wait()
				}
			}
			if err != nil {
				if _, stopped := err.(errInputStopped); stopped {
					return nil, inputStopped(err, out.Element, guard, guard.typed, len([]rune(text)))
				}
				// A dialog cut the typing short: what the field holds is
				// not known (the page is blocked), so it is not claimed.
				res.set("verified", false)
				return dialogCut(ctx, err, res, start)
			}
		}
		if !f.Field {
			// A widget that takes key events but holds no text (--keys).
			res.set("verified", false)
		} else if guard.guardsField() {
			var err error
			if pending != nil {
				// An insert that fails fails the read-back the same way: a
				// dialog cut the typing short.
				err = p.readBackAfter(ctx, w, out, guard, want, f.CE, f.Loose, res, pending, inserted)
			} else {
				err = p.readBack(ctx, w, out, guard, want, f.CE, f.Loose, res)
			}
			if err != nil {
				res.set("verified", false)
				return dialogCut(ctx, err, res, start)
			}
		}
		if f.ByValue {
			res.set("byValue", true)
		}
	}
	res.set("chars", len([]rune(text)))
	if o.Keys {
		res.set("keys", true)
	}
	res.set("input", string(o.Mode))
	if o.Submit {
		w.seen = nil // the Enter comes after the read-back
		if err := w.ready(ctx); err != nil {
			return nil, err
		}
		if err := p.press(ctx, Chord{Key: keyEvent("Enter")}, submitGuard); err != nil {
			if _, stopped := err.(errInputStopped); stopped {
				return nil, inputStopped(err, res.Element, submitGuard, len([]rune(text)), len([]rune(text)))
			}
			res.set("submitted", true)
			return dialogCut(ctx, err, res, start)
		}
		res.set("submitted", true)
	}
	res.After = w.settle(ctx, o.Settle, start)
	if v, ok := w.active["value"]; ok && res.Element != nil && !o.Submit {
		res.Element.States = map[string]any{"value": v}
	}
	return res, nil
}

// focusRes is the library's answer to a focus for typing.
type focusRes struct {
	Focused bool   `json:"focused"`
	Error   string `json:"error"`
	Why     string `json:"why"`
	Format  string `json:"format"`
	Loose   bool   `json:"loose"`
	Want    string `json:"want"` // what the field must hold after the text (set by value: the value set)
	Field   bool   `json:"field"`
	CE      bool   `json:"ce"`
	ByValue bool   `json:"byValue"`
	HadText bool   `json:"hadText"`
	NeedEnd bool   `json:"needEnd"`
	// Guard: the key guard the focus call installed on the element that took
	// the focus (action "guard").
	Guard *keptGuard `json:"guard"`
}

func notEditable(el *Element, why, format string) error {
	e := output.Errorf("not-editable", "cannot type into %s: %s", describeEl(el), why).With("element", el)
	if format != "" {
		e.With("format", format)
	}
	return e
}

// insert types text into the focused field: Backspace to clear a selected
// content with no text to replace it, End to append where the caret cannot
// be set, then Input.insertText or a key event per character. The
// Input.insertText is only sent: wait, when not nil, waits for its answer.
// It is then the one input event of the call (neither End nor a key typed
// by --keys comes before it).
func (p *Page) insert(ctx context.Context, text string, o TypeOptions, f focusRes, g *keyGuard) (wait func() error, err error) {
	if o.Clear && f.HadText && text == "" {
		if err := p.press(ctx, Chord{Key: keyEvent("Backspace")}, g); err != nil {
			return nil, err
		}
	}
	if text == "" {
		return nil, nil
	}
	if f.NeedEnd && !o.Clear {
		if err := p.press(ctx, Chord{Key: keyEvent("End")}, g); err != nil {
			return nil, err
		}
	}
	if o.Keys {
		return nil, p.typeKeys(ctx, text, g)
	}
	if err := g.check(ctx); err != nil {
		return nil, err
	}
	inserted, err := cdp.Begin(ctx, p.tab, input.InsertText, input.InsertTextParams{Text: text})
	if err != nil {
		return nil, wrapCDP(ctx, err)
	}
	return func() error {
		if _, err := inserted(); err != nil {
			return wrapCDP(ctx, err)
		}
		g.countN(len([]rune(text)))
		return nil
	}, nil
}

// readBack checks that the field the key guard g watches holds want; else
// not-typed with what it holds (never a password's value). The field is
// reached through the page-side guard when there is one, else by its own
// object. Read in the top document after the input, it is also what a
// settle handed to the session host needs to know of the page (w.seen).
func (p *Page) readBack(ctx context.Context, w *navWatch, out *outcome, g *keyGuard, want string, ce, loose bool, res *Result) error {
	req, this := readBackReq(g, want, ce, loose)
	var r readBackRes
	err := p.callValue(ctx, out.frame, this, req, &r)
	if err == nil && r.Act == nil && g.id != 0 && out.frame.libUnkept {
		// A document that keeps no library lost the guard with it: the
		// field is the focused element (the guard let no input elsewhere).
		req["op"] = "active"
		delete(req, "guard")
		err = p.callValue(ctx, out.frame, "", req, &r)
	}
	return p.readBackResult(err, w, out, &r, res)
}

// readBackReq is the library call of a read-back of the field g guards, on
// the document (this "") or on the field's object.
func readBackReq(g *keyGuard, want string, ce, loose bool) (req map[string]any, this string) {
	req = map[string]any{"op": "ref", "need": needAny, "act": map[string]any{"kind": "readback", "want": want, "ce": ce, "loose": loose}}
	if g.id != 0 {
		req["guard"] = g.id
		return req, ""
	}
	return req, g.field
}

type readBackRes struct {
	Act    json.RawMessage `json:"act"`
	URL    string          `json:"url"`
	Target map[string]any  `json:"target"`
	Skip   bool            `json:"skip"` // a read-back sent ahead whose focus call left nothing to read
}

// readBackResult maps the answer r (or err) of a read-back.
func (p *Page) readBackResult(err error, w *navWatch, out *outcome, r *readBackRes, res *Result) error {
	if err != nil {
		if isGone(err) {
			return nil // the page navigated away (a search field that submits as you type)
		}
		return err
	}
	if out.frame == p.top && r.URL != "" {
		w.seen = &quietRes{URL: r.URL, Active: r.Target}
	}
	return checkTyped(out.Element, r.Act, res)
}

// pendingReadBack is a read-back sent before the text it checks
// (beginReadBack).
type pendingReadBack struct {
	r    readBackRes
	call *pendingCall
}

// beginReadBack sends the read-back of the field the kept guard g watches
// before the text goes in: the page-side guard holds it until the field's
// input event (guard.after), and the read runs as that event ends, or once
// dtb releases it.
func (p *Page) beginReadBack(ctx context.Context, out *outcome, g *keyGuard, want string, ce, loose bool) (*pendingReadBack, error) {
	req, _ := readBackReq(g, want, ce, loose)
	req["after"] = 1 // Input.insertText is the one input event (insert)
	rb := &pendingReadBack{}
	var err error
	if rb.call, err = p.beginCall(ctx, out.frame, req, &rb.r); err != nil {
		return nil, err
	}
	return rb, nil
}

// readAhead is a read-back sent before the focus call of a type, on the top
// document (readBackAhead).
type readAhead struct {
	token string // the focus call's and the read-back's
	f     *frame
	rb    *pendingReadBack
	taken bool
}

// readBackAhead sends the read-back of the field a type's focus call is about
// to focus, before that call: the library holds it until the focus call (with
// action "readback": the token) leaves its guard and the value the field must
// then hold, then until the text's input event ends (guard.after). Sent
// first, it is at the page before the text; sent after the focus call's
// answer, it would reach the page after the text, the browser's input path
// being the faster one. Nil when the top document keeps no library.
func (p *Page) readBackAhead(ctx context.Context) *readAhead {
	top, err := p.topFrame(ctx)
	if err != nil || top.libUnkept {
		return nil
	}
	a := &readAhead{token: strconv.FormatUint(rand.Uint64(), 36), f: top, rb: &pendingReadBack{}}
	if a.rb.call, err = p.beginCall(ctx, top, map[string]any{"op": "readbackFor", "rb": a.token}, &a.rb.r); err != nil {
		return nil
	}
	return a
}

// take hands the read-back over to the type that sent it.
func (a *readAhead) take() *pendingReadBack {
	a.taken = true
	return a.rb
}

// drop lets go of a read-back the type did not take (its focus call failed,
// or ran in another document): it answers at once, and nobody reads it.
func (a *readAhead) drop(ctx context.Context, p *Page) {
	if !a.taken {
		p.postLib(ctx, a.f, map[string]any{"op": "readbackFor", "rb": a.token, "drop": true})
	}
}

// readBackAfter ends the read-back rb once inserted, the wait for the
// Input.insertText it checks, returns. When the insert is answered first,
// the text is in or will not come (the page cancelled it): the guard is
// released and the field read as it is. A document that lost the library
// is read back as readBack does.
func (p *Page) readBackAfter(ctx context.Context, w *navWatch, out *outcome, g *keyGuard, want string, ce, loose bool, res *Result, rb *pendingReadBack, inserted func() error) error {
	if inserted != nil {
		if err := inserted(); err != nil {
			return err
		}
	}
	a := rb.call.answer(func() { g.post(ctx, map[string]any{"op": "guard", "do": "release", "id": g.id}) })
	if a.missed || a.err == nil && rb.r.Skip {
		return p.readBack(ctx, w, out, g, want, ce, loose, res)
	}
	return p.readBackResult(a.err, w, out, &rb.r, res)
}

// checkTyped maps the library's read-back of a field.
func checkTyped(el *Element, raw json.RawMessage, res *Result) error {
	var r struct {
		OK        bool    `json:"ok"`
		Formatted bool    `json:"formatted"`
		Gone      bool    `json:"gone"`
		Value     *string `json:"value"`
		Length    int     `json:"length"`
	}
	json.Unmarshal(raw, &r)
	if r.OK {
		if r.Formatted {
			res.set("formatted", true)
		}
		return nil
	}
	if r.Gone {
		return nil
	}
	e := output.Errorf("not-typed", "%s does not hold the text typed", describeEl(el)).With("element", el).With("length", r.Length)
	if r.Value != nil {
		e.Message += fmt.Sprintf(": it holds %q", *r.Value)
		e.With("value", *r.Value)
	}
	return e
}

func keyEvent(name string) KeyEvent {
	d := keyDefs[name]
	return KeyEvent{Key: d.key, Code: d.code, KeyCode: d.keyCode, Text: d.text, Location: d.location, Modifier: d.isModifier}
}

// onFocused runs a page-side action on the focused element of the tab.
func (p *Page) onFocused(ctx context.Context, a action) (*outcome, error) {
	top, res, err := p.onTop(ctx, "active", a)
	if err != nil {
		return nil, err
	}
	if res.N == 0 {
		return nil, output.Errorf("no-match", "nothing has the focus; give a locator (a CSS selector, @ref, --label …)")
	}
	return &outcome{Element: p.element(res.Target, top), frame: top, act: res.Act, url: res.URL, token: res.Token}, nil
}

// onTop runs a page-side op in the top frame, retrying while a navigation
// replaces the document under it.
func (p *Page) onTop(ctx context.Context, op string, a action) (*frame, locateRes, error) {
	for attempt := 0; ; attempt++ {
		top, err := p.topFrame(ctx)
		if err != nil {
			return nil, locateRes{}, err
		}
		var res locateRes
		err = p.callValue(ctx, top, "", map[string]any{"op": op, "act": a}, &res)
		if err != nil && isGone(err) && attempt < 20 {
			p.top = nil
			sleep(ctx, 25*time.Millisecond)
			continue
		}
		return top, res, err
	}
}

// Press sends a key or combination to the focused element, or to the located
// element after focusing it.
func (p *Page) Press(ctx context.Context, loc Locator, key string, settle Settle) (*Result, error) {
	start := time.Now()
	c, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	w := p.watch(ctx)
	defer w.stop()
	res := &Result{Action: "press"}
	var out *outcome
	if loc.Empty() {
		out, err = p.onFocused(ctx, action{"kind": "none"})
		if err != nil && !isReason(err, "no-match") {
			return nil, err
		}
	} else {
		out, err = p.act(ctx, loc, needVisible, action{"kind": "focus", "guard": true})
		if err != nil {
			return nil, err
		}
	}
	if out != nil {
		res.Element = out.Element
	}
	if err := w.ready(ctx); err != nil {
		return nil, err
	}
	guard, err := p.guardFocused(ctx, out)
	if err != nil {
		return nil, err
	}
	defer guard.end(ctx)
	if err := p.press(ctx, c, guard); err != nil {
		if _, stopped := err.(errInputStopped); stopped {
			return nil, inputStopped(err, res.Element, guard, 0, 1)
		}
		res.set("key", c.String())
		return dialogCut(ctx, err, res, start)
	}
	res.set("key", c.String())
	if m := c.Modifiers(); m != 0 {
		res.set("modifiers", m)
	}
	res.After = w.settle(ctx, settle, start)
	return res, nil
}

func isReason(err error, reason string) bool {
	oe, ok := err.(*output.Error)
	return ok && oe.Reason == reason
}

// actError maps a page-side action's {error} answer.
func actError(out *outcome, what string) error {
	var r struct {
		Error   string   `json:"error"`
		Why     string   `json:"why"`
		Format  string   `json:"format"`
		Missing []string `json:"missing"`
		Options []struct {
			Value string `json:"value"`
			Label string `json:"label"`
		} `json:"options"`
		Tag   string `json:"tag"`
		Kind  string `json:"kind"`
		Role  string `json:"role"`
		Value string `json:"value"`
	}
	json.Unmarshal(out.act, &r)
	el := describeEl(out.Element)
	switch r.Error {
	case "":
		return nil
	case "not-editable":
		return notEditable(out.Element, r.Why, r.Format)
	case "not-a-select":
		return output.Errorf("not-interactable", "%s is not a <select> (for a custom dropdown, click it and then the option)", el).With("element", out.Element)
	case "single-select":
		return output.Usage("%s takes one value (it is not a multiple select)", el)
	case "no-option":
		return output.Errorf("no-match", "%s has no option %s", el, strings.Join(quoteAll(r.Missing), ", ")).With("element", out.Element).With("options", r.Options)
	case "option-disabled":
		return output.Errorf("not-interactable", "option %q of %s is disabled", r.Value, el).With("element", out.Element)
	case "not-checkable":
		return output.Errorf("not-checkable", "%s has role %s, which has no checked or selected state (check works on checkbox, radio, switch, menuitemcheckbox, menuitemradio, option, treeitem and toggle buttons)", el, r.Role).With("element", out.Element).With("role", r.Role)
	case "radio-uncheck":
		return output.Errorf("not-interactable", "%s is a checked %s: check another one of its group instead", el, r.Kind).With("element", out.Element)
	case "disabled":
		return output.Errorf("not-interactable", "%s is disabled", el).With("element", out.Element)
	}
	return output.Errorf("not-interactable", "cannot %s %s: %s", what, el, r.Error).With("element", out.Element)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Select sets the selection of a <select> by value (or by visible label) and
// dispatches input and change.
func (p *Page) Select(ctx context.Context, loc Locator, values []string, byLabel bool, settle Settle) (*Result, error) {
	start := time.Now()
	if len(values) == 0 {
		return nil, output.Usage("select wants one or more values")
	}
	w := p.watch(ctx)
	defer w.stop()
	out, err := p.act(ctx, loc, needAny, action{"kind": "select", "values": values, "byLabel": byLabel})
	if err != nil {
		return nil, err
	}
	if err := actError(out, "select in"); err != nil {
		return nil, err
	}
	var r struct {
		Changed  bool            `json:"changed"`
		Selected json.RawMessage `json:"selected"`
	}
	json.Unmarshal(out.act, &r)
	res := &Result{Action: "select", Element: out.Element}
	res.set("selected", r.Selected)
	res.set("changed", r.Changed)
	res.After = w.settle(ctx, settle, start)
	return res, nil
}

// Check sets a checkbox, radio button or switch (native or ARIA) to want; it
// is idempotent and reports the final state.
func (p *Page) Check(ctx context.Context, loc Locator, want bool, settle Settle) (*Result, error) {
	start := time.Now()
	w := p.watch(ctx)
	defer w.stop()
	out, err := p.act(ctx, loc, needAny, action{"kind": "check", "want": want})
	if err != nil {
		return nil, err
	}
	if err := actError(out, "check"); err != nil {
		return nil, err
	}
	var r struct {
		Checked any    `json:"checked"`
		Changed bool   `json:"changed"`
		OK      *bool  `json:"ok"`
		Kind    string `json:"kind"`
	}
	json.Unmarshal(out.act, &r)
	name := "check"
	if !want {
		name = "uncheck"
	}
	res := &Result{Action: name, Element: out.Element}
	if out.Element != nil {
		delete(out.Element.States, "checked")
	}
	res.set("checked", r.Checked)
	res.set("changed", r.Changed)
	if r.OK != nil && !*r.OK {
		return nil, output.Errorf("not-interactable", "clicking %s did not make it %sed (it is %v)", describeEl(out.Element), name, r.Checked).With("element", out.Element).With("checked", r.Checked)
	}
	res.After = w.settle(ctx, settle, start)
	return res, nil
}

// ScrollOptions configure Scroll: by DX/DY pixels, or To "top", "bottom",
// "left" or "right"; with a locator and neither, the element is scrolled into
// view; with a locator and either, the element is the scroll container.
type ScrollOptions struct {
	DX, DY *float64
	To     string
	Settle Settle
}

// Scroll scrolls the page, a container, or an element into view, and reports
// the final scroll position.
func (p *Page) Scroll(ctx context.Context, loc Locator, o ScrollOptions) (*Result, error) {
	start := time.Now()
	switch o.To {
	case "", "top", "bottom", "left", "right":
	default:
		return nil, output.Usage("--to must be top, bottom, left or right, not %q", o.To)
	}
	if loc.Empty() && o.DX == nil && o.DY == nil && o.To == "" {
		return nil, output.Usage("scroll wants a locator (scroll it into view), --dx/--dy, or --to top|bottom")
	}
	w := p.watch(ctx)
	defer w.stop()
	a := action{"kind": "scroll", "to": o.To}
	if o.DX != nil {
		a["dx"] = *o.DX
	}
	if o.DY != nil {
		a["dy"] = *o.DY
	}
	var out *outcome
	var err error
	if loc.Empty() {
		out, err = p.onPage(ctx, a)
	} else {
		out, err = p.act(ctx, loc, needAny, a)
	}
	if err != nil {
		return nil, err
	}
	var r struct {
		Page      json.RawMessage `json:"page"`
		Container json.RawMessage `json:"container"`
	}
	json.Unmarshal(out.act, &r)
	res := &Result{Action: "scroll", Element: out.Element}
	if len(r.Page) > 0 {
		res.set("page", r.Page)
	}
	if len(r.Container) > 0 {
		res.set("container", r.Container)
	}
	res.After = w.settle(ctx, o.Settle, start)
	return res, nil
}

// onPage runs a page-side action with no element (page scrolling).
func (p *Page) onPage(ctx context.Context, a action) (*outcome, error) {
	top, res, err := p.onTop(ctx, "page", a)
	if err != nil {
		return nil, err
	}
	return &outcome{frame: top, act: res.Act, url: res.URL, token: res.Token}, nil
}
