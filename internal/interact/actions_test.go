package interact

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func TestCodeNamedKeys(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	kr := Locator{Label: "Key recorder", Nth: NoNth}
	for _, c := range []struct{ key, want string }{
		{"KeyA", "keydown:a:KeyA:65:"},
		{"Digit3", "keydown:3:Digit3:51:"},
		{"Numpad0", "keydown:0:Numpad0:96:"},
		{"Numpad9", "keydown:9:Numpad9:105:"},
		{"NumpadEnter", "keydown:Enter:NumpadEnter:13:"},
		{"NumpadAdd", "keydown:+:NumpadAdd:107:"},
		{"ControlLeft+KeyA", "keydown:a:KeyA:65:C"},
		{"ShiftRight+KeyB", "keydown:B:KeyB:66:S"},
		{"ShiftRight", "keydown:Shift:ShiftRight:16:S"},
		{"ControlRight", "keydown:Control:ControlRight:17:C"},
		{"AltLeft+Minus", "keydown:-:Minus:189:A"},
	} {
		eval(t, tab, "window.events = [], 1")
		if _, err := p.Press(ctx, kr, c.key, quick); err != nil {
			t.Fatalf("press %s: %v", c.key, err)
		}
		got := events(t, tab)
		if !contains(got, c.want) {
			t.Fatalf("press %s: page recorded %v, want %s", c.key, got, c.want)
		}
	}
	// Digits typed through their codes land in the field.
	eval(t, tab, "document.getElementById('keys').value = '', 1")
	for _, k := range []string{"Numpad4", "Digit2", "KeyX"} {
		if _, err := p.Press(ctx, kr, k, quick); err != nil {
			t.Fatal(err)
		}
	}
	if v := eval(t, tab, "document.getElementById('keys').value"); v != "42x" {
		t.Fatalf("typed by code: %q", v)
	}
	if _, err := ParseKey("KeyBogus"); reason(err) != "usage" || !strings.Contains(err.Error(), "KeyboardEvent.code") {
		t.Fatalf("bad code: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clearEvents empties the page's record.
func clearEvents(t *testing.T, tab *cdp.Page) { eval(t, tab, "window.events = [], 1") }

func TestClickWaitsForAStableBox(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	eval(t, tab, "slide(), 1")
	r, err := p.Click(ctx, css("#slider"), ClickOptions{Settle: quick})
	if err != nil {
		t.Fatal(err)
	}
	if got := events(t, tab); strings.Join(got, " ") != "slider" {
		t.Fatalf("the page recorded %v, want one click on the slider", got)
	}
	// The point is where the button stopped, 180 px from where it began.
	if r.Facts["point"].([]int)[0] < 180 {
		t.Fatalf("clicked at %v, before the button stopped", r.Facts["point"])
	}
}

func TestClickPastAStickyHeader(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	// The target is in the viewport but under the sticky header.
	eval(t, tab, "scrollTo(0, document.getElementById('under-sticky').getBoundingClientRect().top + scrollY - 40), 1")
	if top := eval(t, tab, "Math.round(document.getElementById('under-sticky').getBoundingClientRect().top)"); top != "40" {
		t.Fatalf("setup: target at %s", top)
	}
	if _, err := p.Click(ctx, css("#under-sticky"), ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if got := events(t, tab); strings.Join(got, " ") != "sticky target" {
		t.Fatalf("the page recorded %v", got)
	}
}

func TestClickInsideTheSameInteractiveAncestor(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	// The inner div has pointer-events: none: the hit is the link, which is a hit.
	if _, err := p.Click(ctx, css("#pelink .inner"), ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if got := events(t, tab); strings.Join(got, " ") != "link" {
		t.Fatalf("the page recorded %v", got)
	}
	// A button that takes no pointer events itself is not clicked through.
	if _, err := p.Click(ctx, css("#nope-pe"), ClickOptions{Settle: quick}); reason(err) != "not-interactable" || !strings.Contains(err.Error(), "pointer-events") {
		t.Fatalf("pointer-events: none button: %v", err)
	}
	// A page that overwrites window.innerWidth and window.Event does not
	// break clicks and select.
	eval(t, tab, "Object.defineProperty(window, 'innerWidth', {value: 0}), window.Event = null, 1")
	clearEvents(t, tab)
	if _, err := p.Click(ctx, css("#pelink"), ClickOptions{Settle: quick}); err != nil || strings.Join(events(t, tab), " ") != "link" {
		t.Fatalf("corrupted window: %v %v", err, events(t, tab))
	}
}

// TestClickWaitsForAScriptAnimation: an element a script moves in every
// animation frame is clicked once it stands still, even when the tab's
// frames were known to be quiet just before (the check that skips the
// stability frame must see the page's frame requests).
func TestClickWaitsForAScriptAnimation(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	// A first action leaves the tab's frames known and quiet.
	if _, err := p.Click(ctx, css("#slider"), ClickOptions{Settle: DefaultSettle}); err != nil {
		t.Fatal(err)
	}
	clearEvents(t, tab)
	eval(t, tab, "window.clickedAt = 0, document.getElementById('jumper').addEventListener('click', () => { window.clickedAt = performance.now() }), jump(400), 1")
	if _, err := p.Click(ctx, css("#jumper"), ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events(t, tab), " "); got != "jumper" {
		t.Fatalf("the page recorded %q, want the jumping button clicked once it stood still", got)
	}
	if eval(t, tab, "window.jumpedAt > 0 && window.clickedAt >= window.jumpedAt") != "true" {
		t.Fatalf("clicked at %s, the button stopped at %s", eval(t, tab, "window.clickedAt"), eval(t, tab, "window.jumpedAt"))
	}
}

// TestStableSkipsTheFrameOnlyWhenNothingMoves: the stability check waits
// for no frame when the tab's frames are known quiet, and for one after the
// page asked for a frame, or the window or a scroll container scrolled since
// (a smooth scroll moves the page without asking for frames).
func TestStableSkipsTheFrameOnlyWhenNothingMoves(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	// The page counts the frame callbacks that ran before the click's
	// mousedown (dtb's requests go through window.requestAnimationFrame).
	eval(t, tab, `(() => {
	  const raf = requestAnimationFrame.bind(window);
	  window.requestAnimationFrame = cb => raf(t => { window.fired++; cb(t); });
	  addEventListener('mousedown', () => { window.firedAtDown = window.fired; }, true);
	  window.fired = 0;
	  return 1;
	})()`)
	framesBeforeDown := func(prep string) string {
		t.Helper()
		if _, err := p.Click(ctx, css("#slider"), ClickOptions{Settle: DefaultSettle}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // the settle's last frame marks the tab
		eval(t, tab, prep)
		eval(t, tab, "window.fired = 0, window.firedAtDown = -1, 1")
		if _, err := p.Click(ctx, css("#slider"), ClickOptions{Settle: quick}); err != nil {
			t.Fatal(err)
		}
		return eval(t, tab, "window.firedAtDown")
	}
	if got := framesBeforeDown("0"); got != "0" {
		t.Fatalf("quiet frames: %s frame callbacks ran before the input, want none", got)
	}
	if got := framesBeforeDown("requestAnimationFrame(() => {})"); got == "0" {
		t.Fatal("a frame the page asked for was not waited for")
	}
	if got := framesBeforeDown("scrollBy(0, 2)"); got == "0" {
		t.Fatal("a scroll since the last frame was not waited for")
	}
	// A scroll container's scroll, once its scroll event was dispatched.
	if got := framesBeforeDown("new Promise(r => { const s = document.getElementById('scroller'); s.addEventListener('scroll', () => r(1), { once: true }); s.scrollBy(0, 2); })"); got == "0" {
		t.Fatal("a scroll container's scroll since the last frame was not waited for")
	}
}

func TestCoverStableFailsFastMovingIsWaited(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	eval(t, tab, "document.getElementById('banner').style.display = 'block', 1")
	start := time.Now()
	_, err := p.Click(ctx, css("#under-banner"), ClickOptions{Settle: quick})
	d := time.Since(start)
	if reason(err) != "covered" || !strings.Contains(err.Error(), "Consent banner") {
		t.Fatalf("stable cover: %v", err)
	}
	// About 0.5 s (generous on a loaded machine), far from --timeout.
	if d > 2500*time.Millisecond {
		t.Fatalf("a stable cover took %v to fail", d)
	}
	if got := events(t, tab); len(got) != 0 {
		t.Fatalf("a covered click reached the page: %v", got)
	}
	// A cover that fades out is waited for; the click then lands.
	eval(t, tab, "document.getElementById('banner').style.display = 'none', fade(), 1")
	if _, err := p.Click(ctx, css("#under-banner"), ClickOptions{Settle: quick}); err != nil {
		t.Fatalf("fading cover: %v", err)
	}
	if got := events(t, tab); strings.Join(got, " ") != "banner target" {
		t.Fatalf("the page recorded %v", got)
	}
}

func TestDisplayContents(t *testing.T) {
	p, tab, ctx := open(t, "actionable.html")
	for _, loc := range []Locator{css("#dc"), {Role: "button", Name: "Contents button", Nth: NoNth}, {Text: "Contents button", Nth: NoNth}} {
		clearEvents(t, tab)
		r, err := p.Click(ctx, loc, ClickOptions{Settle: quick})
		if err != nil {
			t.Fatalf("click %s: %v", loc, err)
		}
		if got := events(t, tab); strings.Join(got, " ") != "contents" {
			t.Fatalf("click %s: the page recorded %v", loc, got)
		}
		if r.Element.Box[2] == 0 || r.Element.Box[3] == 0 {
			t.Fatalf("box of a display: contents element: %v", r.Element.Box)
		}
	}
	// inspect lists it, and its ref clicks it.
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := ""
	for _, it := range ins.Items {
		if it.Name == "Contents button" {
			ref = it.Ref
		}
	}
	if ref == "" {
		t.Fatalf("inspect lacks the display: contents button: %v", ins.Lines(false))
	}
	st := &session.State{}
	StoreRefs(st, tab.ID, ins.Refs)
	p.Refs = LoadRefs(st)
	clearEvents(t, tab)
	if _, err := p.Click(ctx, Locator{Ref: ref, Nth: NoNth}, ClickOptions{Settle: quick}); err != nil || strings.Join(events(t, tab), " ") != "contents" {
		t.Fatalf("click %s: %v %v", ref, err, events(t, tab))
	}
	// Scrolling to a hidden element fails; nothing scrolled.
	eval(t, tab, "scrollTo(0, 0), 1")
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := p.Scroll(short, css("#ghost"), ScrollOptions{Settle: quick}); reason(err) != "not-visible" || output.ExitCodeFor("not-visible") != 1 {
		t.Fatalf("scroll to a hidden element: %v", err)
	}
	if y := eval(t, tab, "scrollY"); y != "0" {
		t.Fatalf("scrolled to %s", y)
	}
}

func TestTypeRefusesNonTextFields(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	for _, id := range []string{"btn", "sub", "rst", "img", "cb", "rd", "fl", "ro", "plain"} {
		before := eval(t, tab, "(e => e.value + '|' + e.textContent)(document.getElementById('"+id+"'))")
		for _, clear := range []bool{false, true} {
			_, err := p.Type(ctx, css("#"+id), "hello", TypeOptions{Clear: clear, Settle: quick})
			if reason(err) != "not-editable" || output.ExitCodeFor("not-editable") != 1 {
				t.Fatalf("type into #%s (clear %v): %v", id, clear, err)
			}
		}
		// --clear never empties a button's label: nothing was touched.
		if _, err := p.Type(ctx, css("#"+id), "", TypeOptions{Clear: true, Settle: quick}); reason(err) != "not-editable" {
			t.Fatalf("clear #%s: %v", id, err)
		}
		if after := eval(t, tab, "(e => e.value + '|' + e.textContent)(document.getElementById('"+id+"'))"); after != before {
			t.Fatalf("#%s changed from %q to %q", id, before, after)
		}
	}
	if got := events(t, tab); len(got) != 0 {
		t.Fatalf("refused fields got events: %v", got)
	}
	if a := eval(t, tab, "document.activeElement.id"); a == "btn" || a == "ro" {
		t.Fatalf("a refused field took the focus: %s", a)
	}
	// Number inputs take numbers only.
	if _, err := p.Type(ctx, css("#num"), "abc", TypeOptions{Settle: quick}); reason(err) != "not-editable" {
		t.Fatalf("letters into a number: %v", err)
	}
	if _, err := p.Type(ctx, css("#num"), "-12.5", TypeOptions{Settle: quick}); err != nil || eval(t, tab, "document.getElementById('num').value") != "-12.5" {
		t.Fatalf("number: %v", err)
	}
	if _, err := p.Type(ctx, css("#num"), "e", TypeOptions{Settle: quick}); reason(err) != "not-editable" {
		t.Fatalf("-12.5e is no number: %v", err)
	}
	if _, err := p.Type(ctx, css("#num"), "7", TypeOptions{Clear: true, Settle: quick}); err != nil || eval(t, tab, "document.getElementById('num').value") != "7" {
		t.Fatalf("number --clear: %v", err)
	}
}

func TestTypeSetsDateLikeInputsByValue(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	for _, c := range []struct{ id, text, want string }{
		{"date", "2020-03-02", "2020-03-02"},
		{"time", "13:45", "13:45"},
		{"time", "07:05:30", "07:05:30"},
		{"dtl", "2020-03-02 10:30", "2020-03-02T10:30"},
		{"dtl", "2020-03-02T10:30", "2020-03-02T10:30"},
		{"month", "2021-11", "2021-11"},
		{"week", "2021-W07", "2021-W07"},
		{"color", "#12abef", "#12abef"},
		{"range", "60", "60"},
	} {
		clearEvents(t, tab)
		r, err := p.Type(ctx, css("#"+c.id), c.text, TypeOptions{Settle: quick})
		if err != nil {
			t.Fatalf("type %s into #%s: %v", c.text, c.id, err)
		}
		if v := eval(t, tab, "document.getElementById('"+c.id+"').value"); v != c.want {
			t.Fatalf("#%s holds %q, want %q", c.id, v, c.want)
		}
		if got := strings.Join(events(t, tab), " "); got != "input:"+c.id+" change:"+c.id+":"+c.want || r.Facts["byValue"] != true {
			t.Fatalf("#%s events %q, facts %v", c.id, got, r.Facts)
		}
	}
	// A wrong format is refused before anything changes.
	for _, c := range []struct{ id, text string }{{"date", "03/02/2020"}, {"time", "1pm"}, {"color", "red"}, {"range", "loud"}, {"week", "2021-07"}} {
		before := eval(t, tab, "document.getElementById('"+c.id+"').value")
		_, err := p.Type(ctx, css("#"+c.id), c.text, TypeOptions{Settle: quick})
		if reason(err) != "not-editable" || output.AsError(err).Details["format"] == nil {
			t.Fatalf("type %q into #%s: %v", c.text, c.id, err)
		}
		if after := eval(t, tab, "document.getElementById('"+c.id+"').value"); after != before {
			t.Fatalf("#%s changed to %q", c.id, after)
		}
	}
	// A value the input cannot hold (not on the range's step) is not typed.
	if _, err := p.Type(ctx, css("#range"), "55", TypeOptions{Settle: quick}); reason(err) != "not-typed" || output.AsError(err).Details["value"] != "60" {
		t.Fatalf("range off its step: %v", err)
	}
}

func TestTypeReadsTheFieldBack(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	// Appends to what the field holds (the caret goes to the end), also where
	// the caret cannot be set (email).
	if _, err := p.Type(ctx, css("#name"), "Lovelace", TypeOptions{Settle: quick}); err != nil || eval(t, tab, "document.getElementById('name').value") != "Ada Lovelace" {
		t.Fatalf("append: %v %s", err, eval(t, tab, "document.getElementById('name').value"))
	}
	if _, err := p.Type(ctx, css("#mail"), "example.com", TypeOptions{Settle: quick}); err != nil || eval(t, tab, "document.getElementById('mail').value") != "ada@example.com" {
		t.Fatalf("append to an email: %v %s", err, eval(t, tab, "document.getElementById('mail').value"))
	}
	if _, err := p.Type(ctx, css("#ce"), " world", TypeOptions{Settle: quick}); err != nil || eval(t, tab, "document.getElementById('ce').textContent") != "Hello world" {
		t.Fatalf("contenteditable: %v %s", err, eval(t, tab, "document.getElementById('ce').textContent"))
	}
	// maxlength cuts the text: not typed, saying what the field holds.
	_, err := p.Type(ctx, css("#short"), "abcdef", TypeOptions{Settle: quick})
	if reason(err) != "not-typed" || output.AsError(err).Details["value"] != "abc" {
		t.Fatalf("maxlength: %v", err)
	}
	// A password's value is never shown, not even in the failure.
	_, err = p.Type(ctx, css("#pin"), "123456", TypeOptions{Settle: quick})
	if reason(err) != "not-typed" || output.AsError(err).Details["value"] != nil || strings.Contains(err.Error(), "1234") || output.AsError(err).Details["length"] != 4 {
		t.Fatalf("password: %v %+v", err, output.AsError(err).Details)
	}
	// A page that throws the input away.
	if _, err := p.Type(ctx, css("#stubborn"), "hello", TypeOptions{Keys: true, Settle: quick}); reason(err) != "not-typed" {
		t.Fatalf("stubborn field: %v", err)
	}
	// A page that reformats what it gets has taken the text.
	r, err := p.Type(ctx, css("#phone"), "5551234567", TypeOptions{Settle: quick})
	if err != nil || r.Facts["formatted"] != true || eval(t, tab, "document.getElementById('phone').value") != "(555) 123-4567" {
		t.Fatalf("phone mask: %v %+v", err, r)
	}
	if _, err := p.Type(ctx, css("#upper"), "ada", TypeOptions{Mode: InputDOM, Settle: quick}); err != nil || eval(t, tab, "document.getElementById('upper').value") != "ADA" {
		t.Fatalf("upper: %v", err)
	}
	// DOM mode refuses and reads back too.
	if _, err := p.Type(ctx, css("#btn"), "x", TypeOptions{Mode: InputDOM, Clear: true, Settle: quick}); reason(err) != "not-editable" || eval(t, tab, "document.getElementById('btn').value") != "Go" {
		t.Fatalf("dom mode into a button: %v", err)
	}
	if _, err := p.Type(ctx, css("#short"), "wxyz", TypeOptions{Mode: InputDOM, Clear: true, Settle: quick}); err != nil {
		// The DOM setter ignores maxlength: the value is what was set.
		t.Fatalf("dom mode: %v", err)
	}
}

func TestSelectWaitsForLateOptions(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	eval(t, tab, "addLate(), 1")
	if _, err := p.Select(ctx, css("#late"), []string{"z"}, false, quick); err != nil {
		t.Fatal(err)
	}
	if got := events(t, tab); !contains(got, "change:late:z") {
		t.Fatalf("the page recorded %v", got)
	}
	// A page that replaced window.Event still gets its change event.
	eval(t, tab, "window.Event = null, window.InputEvent = null, 1")
	if _, err := p.Select(ctx, css("#late"), []string{"a"}, false, quick); err != nil || !contains(events(t, tab), "change:late:a") {
		t.Fatalf("select with window.Event replaced: %v %v", err, events(t, tab))
	}
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := p.Select(short, css("#late"), []string{"never"}, false, quick); reason(err) != "no-match" || time.Since(start) < time.Second {
		t.Fatalf("missing option: %v after %v", err, time.Since(start))
	}
}

func TestCheckARIARoles(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	for _, c := range []struct {
		id, attr string
	}{
		{"a-cb", "aria-checked"}, {"a-radio", "aria-checked"}, {"a-switch", "aria-checked"},
		{"a-mic", "aria-checked"}, {"a-mir", "aria-checked"}, {"a-opt", "aria-selected"}, {"a-tree", "aria-selected"},
	} {
		clearEvents(t, tab)
		for i := 0; i < 2; i++ { // idempotent
			r, err := p.Check(ctx, css("#"+c.id), true, quick)
			if err != nil || r.Facts["checked"] != true || r.Facts["changed"] != (i == 0) {
				t.Fatalf("check #%s (#%d): %v %+v", c.id, i, err, r)
			}
		}
		if got := events(t, tab); strings.Join(got, " ") != c.id+":true" {
			t.Fatalf("check #%s: the page recorded %v", c.id, got)
		}
		if v := eval(t, tab, "document.getElementById('"+c.id+"').getAttribute('"+c.attr+"')"); v != "true" {
			t.Fatalf("#%s %s=%s", c.id, c.attr, v)
		}
	}
	for _, id := range []string{"a-cb", "a-switch", "a-mic", "a-opt", "a-tree"} {
		if r, err := p.Check(ctx, css("#"+id), false, quick); err != nil || r.Facts["checked"] != false {
			t.Fatalf("uncheck #%s: %v", id, err)
		}
	}
	if _, err := p.Check(ctx, css("#a-mir"), false, quick); reason(err) != "not-interactable" {
		t.Fatalf("uncheck a menuitemradio: %v", err)
	}
	_, err := p.Check(ctx, css("#a-btn"), true, quick)
	if reason(err) != "not-checkable" || !strings.Contains(err.Error(), "button") || output.AsError(err).Details["role"] != "button" {
		t.Fatalf("check a button: %v", err)
	}
}

func TestClickInTransformedFrames(t *testing.T) {
	testSession(t)
	p, tab, ctx := open(t, "tframes.html?other="+otherURL)
	for _, f := range []string{"scaledf", "rotatedf", "nestf", "nest-inner", "oopf", "oop-inner"} {
		if _, err := p.Wait(ctx, WaitOptions{Loc: &Locator{CSS: "button", Frame: f, Nth: 7}}); err != nil {
			t.Fatalf("frame %s did not load: %v", f, err)
		}
	}
	// The same-origin frames' records, read from the top document.
	record := func(path string) string {
		return eval(t, tab, "document."+path+".contentWindow.events.join('|')")
	}
	sameOrigin := map[string]string{
		"scaled":     "getElementById('scaled')",
		"rotated":    "getElementById('rotated')",
		"nest":       "getElementById('nest')",
		"nest-inner": "getElementById('nest').contentDocument.getElementById('inner')",
	}
	for _, n := range []string{"scaled", "rotated", "nest", "nest-inner", "oop", "oop-inner"} {
		for _, i := range []string{"5", "2"} {
			name := n + " " + i
			r, err := p.Click(ctx, Locator{Role: "button", Name: name, Exact: true, Nth: NoNth}, ClickOptions{Settle: quick})
			if err != nil {
				t.Fatalf("click %s: %v", name, err)
			}
			// The reported box holds the click point.
			pt, b := r.Facts["point"].([]int), r.Element.Box
			if pt[0] < b[0] || pt[0] > b[0]+b[2] || pt[1] < b[1] || pt[1] > b[1]+b[3] {
				t.Fatalf("click %s: point %v outside the reported box %v", name, pt, b)
			}
			if path, ok := sameOrigin[n]; ok {
				got := record(path)
				if !strings.HasSuffix(got, name) || strings.Contains(got, "miss") {
					t.Fatalf("click %s at %v: the frame recorded %s", name, r.Facts["point"], got)
				}
				continue
			}
			// The cross-site frames mark the button they got the click on.
			frame := "oopf"
			if n == "oop-inner" {
				frame = "oop-inner"
			}
			short, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = p.Wait(short, WaitOptions{Loc: &Locator{CSS: "button[data-clicked]", Frame: frame, Nth: NoNth}})
			cancel()
			if err != nil {
				t.Fatalf("click %s at %v did not land: %v", name, r.Facts["point"], err)
			}
			clearMark(t, p, ctx, frame)
		}
	}
}

// clearMark removes the click marks of a frame's buttons.
func clearMark(t *testing.T, p *Page, ctx context.Context, frame string) {
	t.Helper()
	f, err := p.frameNamed(ctx, frame)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"expression": "for (const b of document.querySelectorAll('[data-clicked]')) delete b.dataset.clicked"}
	if f.ctxID != 0 {
		params["contextId"] = f.ctxID
	}
	if err := f.sess.Call(ctx, "Runtime.evaluate", params, nil); err != nil {
		t.Fatal(err)
	}
}

// A <button> that is itself display: contents, below the fold (and inside a
// scroller), has only its text's box: it is scrolled to by that box and
// clicked through its text (issue 23.6).
func TestDisplayContentsBelowTheFold(t *testing.T) {
	p, tab, ctx := open(t, "contents-below.html")
	for _, loc := range []Locator{{Text: "click me", Nth: NoNth}, css("#below"), {Role: "button", Name: "click me", Nth: NoNth}} {
		eval(t, tab, "scrollTo(0, 0), 1")
		if _, err := p.Click(ctx, loc, ClickOptions{Settle: quick}); err != nil {
			t.Fatalf("click %s: %v", loc, err)
		}
	}
	if n := eval(t, tab, "String(window.clicked)"); n != "3" {
		t.Fatalf("the page counted %s clicks, want 3", n)
	}
	eval(t, tab, "scrollTo(0, 0), 1")
	if _, err := p.Click(ctx, Locator{Role: "button", Name: "inner button", Nth: NoNth}, ClickOptions{Settle: quick}); err != nil {
		t.Fatalf("click in a scroller: %v", err)
	}
	if n := eval(t, tab, "String(window.inner)"); n != "1" {
		t.Fatalf("the inner button got %s clicks", n)
	}
}

// A button in a cross-site frame 10,000 px down the page, clicked right after
// the page opens: the frame is scrolled to and its content clicked once it
// can be hit, within the deadline (issue 23.6).
func TestClickInAFarCrossSiteFrame(t *testing.T) {
	for i := 0; i < 3; i++ {
		p, tab, ctx := open(t, "farframe.html?other="+otherURL)
		if _, err := p.Click(ctx, Locator{Role: "button", Name: "Far button", Nth: NoNth}, ClickOptions{Settle: quick}); err != nil {
			t.Fatalf("try %d: click in the far frame: %v", i, err)
		}
		deadline := time.Now().Add(3 * time.Second)
		for eval(t, tab, "String(window.clicked)") != "1" {
			if time.Now().After(deadline) {
				t.Fatalf("try %d: the frame's button was not clicked (the page counted %s)", i, eval(t, tab, "String(window.clicked)"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
