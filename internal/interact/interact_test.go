package interact

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// open loads a fixture in a new tab and returns the interact page on it.
func open(t *testing.T, name string) (*Page, *cdp.Page, context.Context) {
	t.Helper()
	testSession(t)
	tab := newTab(t, fixtureURL(name))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	p := New(tab, tab.ID)
	p.UploadDir = t.TempDir() // as the CLI gives the session's; never the shared fallback
	t.Cleanup(p.Close)
	return p, tab, ctx
}

func events(t *testing.T, tab *cdp.Page) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw, err := tab.Evaluate(ctx, "window.events", false)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	var ev []string
	json.Unmarshal(raw, &ev)
	return ev
}

func eval(t *testing.T, tab *cdp.Page, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw, err := tab.Evaluate(ctx, expr, true)
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	var s any
	json.Unmarshal(raw, &s)
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func reason(err error) string {
	if err == nil {
		return ""
	}
	return output.AsError(err).Reason
}

func css(s string) Locator { return Locator{CSS: s, Nth: NoNth} }

var quick = Settle{Quiet: 10 * time.Millisecond, Cap: 500 * time.Millisecond}

func lastEvent(t *testing.T, tab *cdp.Page) string {
	ev := events(t, tab)
	if len(ev) == 0 {
		return ""
	}
	return ev[len(ev)-1]
}

func TestLocatorKinds(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	cases := []struct {
		name string
		loc  Locator
		want string
	}{
		{"css", css("#save"), "save"},
		{"text", Locator{Text: "Save draft", Nth: NoNth}, "save draft"},
		{"text exact", Locator{Text: "Save", Exact: true, Nth: NoNth}, "save"},
		{"role and name", Locator{Role: "button", Name: "Save draft", Nth: NoNth}, "save draft"},
		{"role exact name", Locator{Role: "button", Name: "Save", Exact: true, Nth: NoNth}, "save"},
		{"aria role on a div", Locator{Role: "button", Name: "Div button", Nth: NoNth}, "div button"},
		{"nth", Locator{Role: "button", Name: "Save", Nth: 1}, "save draft"},
		{"within exact wins", Locator{Role: "button", Name: "Add to cart", Within: "Walnut Desk Lamp", Nth: NoNth}, "cart:lamp"},
		{"within other card", Locator{Role: "button", Name: "Add to cart", Within: "oak chair", Nth: NoNth}, "cart:chair"},
		{"shadow role", Locator{Role: "button", Name: "Shadow button", Nth: NoNth}, "shadow"},
		{"shadow css", css("#sb"), "shadow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := p.Click(ctx, c.loc, ClickOptions{Settle: quick})
			if err != nil {
				t.Fatalf("click %s: %v", c.loc, err)
			}
			if got := lastEvent(t, tab); got != c.want {
				t.Fatalf("click %s recorded %q, want %q", c.loc, got, c.want)
			}
			if r.Element == nil || r.Element.Role != "button" || r.Element.Box[2] == 0 {
				t.Fatalf("element report: %+v", r.Element)
			}
		})
	}
	// Label and placeholder: type into the fields.
	if _, err := p.Type(ctx, Locator{Label: "Email address", Nth: NoNth}, "ada@example.com", TypeOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('email').value"); v != "ada@example.com" {
		t.Fatalf("email = %q", v)
	}
	if _, err := p.Type(ctx, Locator{Placeholder: "search the", Nth: NoNth}, "lamp", TypeOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('q').value"); v != "lamp" {
		t.Fatalf("q = %q", v)
	}
	if _, err := p.Type(ctx, Locator{Label: "Shadow field", Nth: NoNth}, "in shadow", TypeOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('host').shadowRoot.getElementById('sf').value"); v != "in shadow" {
		t.Fatalf("shadow field = %q", v)
	}
	// Coordinates: the centre of #save.
	eval(t, tab, "scrollTo(0, 0), 1")
	x := mustFloat(t, eval(t, tab, "(r => r.left + r.width/2)(document.getElementById('save').getBoundingClientRect())"))
	y := mustFloat(t, eval(t, tab, "(r => r.top + r.height/2)(document.getElementById('save').getBoundingClientRect())"))
	r, err := p.Click(ctx, Locator{X: &x, Y: &y, Nth: NoNth}, ClickOptions{Settle: quick})
	if err != nil || lastEvent(t, tab) != "save" || r.Element.ID != "save" {
		t.Fatalf("coordinate click: %v %q %+v", err, lastEvent(t, tab), r)
	}
	// Document coordinates far down the page scroll it into view.
	by := mustFloat(t, eval(t, tab, "document.getElementById('bottom').getBoundingClientRect().top + scrollY + 5"))
	bx := 20.0
	r, err = p.Hover(ctx, Locator{X: &bx, Y: &by, Document: true, Nth: NoNth}, ClickOptions{Settle: quick})
	if err != nil || r.Element.ID != "bottom" {
		t.Fatalf("document coordinates: %v %+v", err, r)
	}
}

func mustFloat(t *testing.T, s string) float64 {
	var f float64
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

func TestStrictness(t *testing.T) {
	p, _, ctx := open(t, "app.html")
	_, err := p.Click(ctx, Locator{Role: "button", Name: "Add to cart", Nth: NoNth}, ClickOptions{Settle: quick})
	if reason(err) != "ambiguous-match" || output.ExitCodeFor(reason(err)) != 7 {
		t.Fatalf("ambiguous: %v", err)
	}
	oe := output.AsError(err)
	if oe.Details["count"] != 3 || len(oe.Details["candidates"].([]*Element)) != 3 {
		t.Fatalf("ambiguous details: %+v", oe.Details)
	}
	short, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = p.Click(short, css("#nope"), ClickOptions{Settle: quick})
	if reason(err) != "no-match" || output.ExitCodeFor("no-match") != 3 {
		t.Fatalf("no match: %v", err)
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Fatalf("no-match did not wait (%v)", d)
	}
	// A match that appears while waiting is found.
	go func() {
		time.Sleep(300 * time.Millisecond)
		p.tab.Call(context.Background(), "Runtime.evaluate", map[string]any{"expression": "document.body.insertAdjacentHTML('beforeend', '<button id=late onclick=rec(\"late\")>Late</button>')"}, nil)
	}()
	if _, err := p.Click(ctx, css("#late"), ClickOptions{Settle: quick}); err != nil {
		t.Fatalf("late element: %v", err)
	}
	// Disabled elements are not clicked.
	short2, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	_, err = p.Click(short2, css("#dis"), ClickOptions{Settle: quick})
	if reason(err) != "not-interactable" {
		t.Fatalf("disabled: %v", err)
	}
	// Bad usage.
	if _, err := p.Click(ctx, Locator{CSS: "a", Text: "b", Nth: NoNth}, ClickOptions{}); reason(err) != "usage" {
		t.Fatalf("two kinds: %v", err)
	}
	if _, err := p.Click(ctx, css("[[bad"), ClickOptions{}); reason(err) != "usage" {
		t.Fatalf("bad selector: %v", err)
	}
}

func TestCovered(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	eval(t, tab, "(() => { const t = document.getElementById('cover-target'); t.style.position='fixed'; t.style.bottom='20px'; t.style.left='10px'; document.getElementById('consent').style.display='block'; return 1 })()")
	_, err := p.Click(ctx, css("#cover-target"), ClickOptions{Settle: quick})
	if reason(err) != "covered" || output.ExitCodeFor("covered") != 1 {
		t.Fatalf("covered: %v", err)
	}
	if !strings.Contains(err.Error(), "Cookie consent") {
		t.Fatalf("covered error does not name the banner: %v", err)
	}
	if _, err := p.Click(ctx, css("#cover-target"), ClickOptions{Settle: quick, Force: true}); err != nil {
		t.Fatalf("force: %v", err)
	}
	// Dismiss the banner, then the click lands.
	if _, err := p.Click(ctx, Locator{Role: "button", Name: "Accept", Nth: NoNth}, ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Click(ctx, css("#cover-target"), ClickOptions{Settle: quick}); err != nil || lastEvent(t, tab) != "covered clicked" {
		t.Fatalf("after dismiss: %v %v", err, events(t, tab))
	}
}

func TestClickVariants(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	if _, err := p.Click(ctx, css("#dbl"), ClickOptions{Count: 2, Settle: quick}); err != nil || lastEvent(t, tab) != "dblclick" {
		t.Fatalf("double: %v %v", err, events(t, tab))
	}
	if _, err := p.Click(ctx, css("#dbl"), ClickOptions{Button: "right", Settle: quick}); err != nil || lastEvent(t, tab) != "contextmenu" {
		t.Fatalf("right: %v %v", err, events(t, tab))
	}
	if _, err := p.Hover(ctx, css("#hoverme"), ClickOptions{Settle: quick}); err != nil || lastEvent(t, tab) != "hover" {
		t.Fatalf("hover: %v %v", err, events(t, tab))
	}
	if _, err := p.Click(ctx, css("#save2"), ClickOptions{Mode: InputDOM, Settle: quick}); err != nil || lastEvent(t, tab) != "save draft" {
		t.Fatalf("dom click: %v %v", err, events(t, tab))
	}
	// A click in a scroll container scrolls it first.
	if _, err := p.Click(ctx, css("#inbox"), ClickOptions{Settle: quick}); err != nil || lastEvent(t, tab) != "inbox" {
		t.Fatalf("scroller: %v %v", err, events(t, tab))
	}
}

func TestNavigationReport(t *testing.T) {
	p, _, ctx := open(t, "app.html")
	r, err := p.Click(ctx, Locator{Role: "link", Name: "Push state", Nth: NoNth}, ClickOptions{Settle: DefaultSettle})
	if err != nil || r.After.Navigated || !r.After.SameDocument || !strings.Contains(r.After.URL, "pushed=1") {
		t.Fatalf("pushState: %v %+v", err, r.After)
	}
	r, err = p.Click(ctx, Locator{Role: "link", Name: "Next page", Nth: NoNth}, ClickOptions{Settle: DefaultSettle})
	if err != nil || !r.After.Navigated || !r.After.Committed || !strings.HasSuffix(r.After.URL, "/next.html") {
		t.Fatalf("navigation: %v %+v", err, r.After)
	}
	// The same Page keeps working on the new document.
	if _, err := p.Click(ctx, css("#save"), ClickOptions{Settle: quick}); err != nil {
		t.Fatalf("after navigation: %v", err)
	}
}

func TestTypeAndKeys(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	if _, err := p.Type(ctx, Locator{Label: "Notes", Nth: NoNth}, "new text", TypeOptions{Clear: true, Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('notes').value"); v != "new text" {
		t.Fatalf("clear+type: %q", v)
	}
	if _, err := p.Type(ctx, Locator{Label: "Notes", Nth: NoNth}, "", TypeOptions{Clear: true, Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('notes').value"); v != "" {
		t.Fatalf("clear only: %q", v)
	}
	// Type into the focused element without a locator; --keys sends key events.
	if _, err := p.Click(ctx, Locator{Label: "Key recorder", Nth: NoNth}, ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	eval(t, tab, "window.events = []")
	if _, err := p.Type(ctx, Locator{Nth: NoNth}, "aB", TypeOptions{Keys: true, Settle: quick}); err != nil {
		t.Fatal(err)
	}
	want := []string{"keydown:a:KeyA:65:", "keyup:a:KeyA:65:", "keydown:Shift:ShiftLeft:16:S", "keydown:B:KeyB:66:S", "keyup:B:KeyB:66:S", "keyup:Shift:ShiftLeft:16:"}
	if got := events(t, tab); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("key events:\n got %v\nwant %v", got, want)
	}
	if v := eval(t, tab, "document.getElementById('keys').value"); v != "aB" {
		t.Fatalf("typed keys: %q", v)
	}
	// Combinations, checked by what the page recorded.
	for _, c := range []struct{ key, want string }{
		{"Enter", "keydown:Enter:Enter:13:"},
		{"Tab", "keydown:Tab:Tab:9:"},
		{"Escape", "keydown:Escape:Escape:27:"},
		{"ArrowDown", "keydown:ArrowDown:ArrowDown:40:"},
		{"Control+a", "keydown:a:KeyA:65:C"},
		{"Shift+Tab", "keydown:Tab:Tab:9:S"},
		{"Alt+Shift+ArrowLeft", "keydown:ArrowLeft:ArrowLeft:37:SA"},
		{"Meta+k", "keydown:k:KeyK:75:M"},
	} {
		if _, err := p.Press(ctx, Locator{Label: "Key recorder", Nth: NoNth}, c.key, quick); err != nil {
			t.Fatalf("press %s: %v", c.key, err)
		}
		found := false
		for _, e := range events(t, tab) {
			if e == c.want {
				found = true
			}
		}
		if !found {
			t.Fatalf("press %s: page recorded %v, want %s", c.key, events(t, tab), c.want)
		}
		eval(t, tab, "window.events = []")
	}
	// Control+a selects all: typing then replaces the text.
	if _, err := p.Press(ctx, Locator{Label: "Key recorder", Nth: NoNth}, "Control+a", quick); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Type(ctx, Locator{Nth: NoNth}, "Z", TypeOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('keys').value"); v != "Z" {
		t.Fatalf("after Control+a and typing: %q", v)
	}
	// --submit presses Enter in the form.
	if _, err := p.Type(ctx, css("#q"), "desk", TypeOptions{Clear: true, Submit: true, Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if e := lastEvent(t, tab); e != "submit:desk" {
		t.Fatalf("submit: %q", e)
	}
	// insertText fires real input events.
	eval(t, tab, "window.events = []")
	p.Type(ctx, Locator{Label: "Email", Nth: NoNth}, "x", TypeOptions{Settle: quick})
	if e := events(t, tab); len(e) == 0 || e[0] != "input:insertText" {
		t.Fatalf("input events: %v", e)
	}
	// DOM mode.
	if _, err := p.Type(ctx, Locator{Label: "Email", Nth: NoNth}, "dom@example.com", TypeOptions{Mode: InputDOM, Clear: true, Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if v := eval(t, tab, "document.getElementById('email').value"); v != "dom@example.com" {
		t.Fatalf("dom type: %q", v)
	}
	// A password's value is never reported.
	r, err := p.Type(ctx, Locator{Label: "Password", Nth: NoNth}, "secret", TypeOptions{Settle: quick})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "secret") || strings.Contains(string(b), "hunter2") {
		t.Fatalf("password leaked: %s", b)
	}
	// Bad keys are usage errors.
	if _, err := ParseKey("Control+Bogus"); reason(err) != "usage" {
		t.Fatalf("bad key: %v", err)
	}
}

func TestSelectCheckScroll(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	r, err := p.Select(ctx, Locator{Label: "Size", Nth: NoNth}, []string{"l"}, false, quick)
	if err != nil || eval(t, tab, "document.getElementById('size').value") != "l" || lastEvent(t, tab) != "size:l" {
		t.Fatalf("select by value: %v %+v", err, r)
	}
	if _, err := p.Select(ctx, css("#size"), []string{"small"}, true, quick); err != nil || eval(t, tab, "document.getElementById('size').value") != "s" {
		t.Fatalf("select by label: %v", err)
	}
	// A value no option has selects the option whose label is exactly that;
	// a lower-case label is not a value, and is only matched with byLabel.
	if _, err := p.Select(ctx, css("#size"), []string{"Large"}, false, quick); err != nil || eval(t, tab, "document.getElementById('size').value") != "l" {
		t.Fatalf("select by exact label without byLabel: %v", err)
	}
	if _, err := p.Select(ctx, css("#colors"), []string{"red", "blue"}, false, quick); err != nil ||
		eval(t, tab, "[...document.getElementById('colors').selectedOptions].map(o=>o.value).join()") != "red,blue" {
		t.Fatalf("multiple: %v", err)
	}
	noOption, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := p.Select(noOption, css("#size"), []string{"xl"}, false, quick); reason(err) != "no-match" {
		t.Fatalf("missing option: %v", err)
	}
	if _, err := p.Select(ctx, css("#size"), []string{"s", "m"}, false, quick); reason(err) != "usage" {
		t.Fatalf("two values on a single select: %v", err)
	}
	// check is idempotent and reports the final state.
	for i, want := range []bool{true, true} {
		r, err := p.Check(ctx, Locator{Label: "I accept the terms", Nth: NoNth}, true, quick)
		if err != nil || r.Facts["checked"] != want || r.Facts["changed"] != (i == 0) {
			t.Fatalf("check #%d: %v %+v", i, err, r)
		}
	}
	// A visually hidden checkbox through its label text; uncheck.
	r, err = p.Check(ctx, Locator{Text: "Newsletter", Nth: NoNth}, false, quick)
	if err != nil || r.Facts["checked"] != false || eval(t, tab, "document.getElementById('news').checked") != "false" {
		t.Fatalf("uncheck hidden: %v %+v", err, r)
	}
	// Radios; unchecking a radio is refused.
	if _, err := p.Check(ctx, Locator{Role: "radio", Name: "Pro", Nth: NoNth}, true, quick); err != nil || eval(t, tab, "document.querySelector('[value=pro]').checked") != "true" {
		t.Fatalf("radio: %v", err)
	}
	if _, err := p.Check(ctx, Locator{Role: "radio", Name: "Pro", Nth: NoNth}, false, quick); reason(err) != "not-interactable" {
		t.Fatalf("uncheck radio: %v", err)
	}
	// An ARIA switch.
	r, err = p.Check(ctx, Locator{Role: "switch", Name: "Dark mode", Nth: NoNth}, true, quick)
	if err != nil || r.Facts["checked"] != true || eval(t, tab, "document.getElementById('dark').getAttribute('aria-checked')") != "true" {
		t.Fatalf("switch: %v %+v", err, r)
	}
	if _, err := p.Check(ctx, css("#save"), true, quick); reason(err) != "not-checkable" {
		t.Fatalf("check a button: %v", err)
	}
	// scroll
	dy := 300.0
	r, err = p.Scroll(ctx, Locator{Nth: NoNth}, ScrollOptions{DY: &dy, Settle: quick})
	if err != nil || eval(t, tab, "scrollY") != "300" {
		t.Fatalf("scroll by: %v %+v", err, r)
	}
	r, err = p.Scroll(ctx, Locator{Nth: NoNth}, ScrollOptions{To: "bottom", Settle: quick})
	var pg struct {
		AtBottom bool `json:"atBottom"`
	}
	b, _ := json.Marshal(r.Facts["page"])
	json.Unmarshal(b, &pg)
	if err != nil || !pg.AtBottom {
		t.Fatalf("scroll to bottom: %v %s", err, b)
	}
	if _, err := p.Scroll(ctx, css("#save"), ScrollOptions{Settle: quick}); err != nil || eval(t, tab, "scrollY") == "0" && false {
		t.Fatalf("scroll into view: %v", err)
	}
	r, err = p.Scroll(ctx, css("#box"), ScrollOptions{To: "bottom", Settle: quick})
	if err != nil || r.Facts["container"] == nil || eval(t, tab, "document.getElementById('box').scrollTop > 0") != "true" {
		t.Fatalf("scroll container: %v %+v", err, r)
	}
}

func TestUpload(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	dir := t.TempDir()
	a := filepath.Join(dir, "report.txt")
	b := filepath.Join(dir, "photo.png")
	os.WriteFile(a, []byte("hello"), 0o644)
	os.WriteFile(b, []byte("png!png!"), 0o644)
	// A hidden (display:none) input located by CSS.
	r, err := p.Upload(ctx, css("#hiddenfile"), []string{a, b}, quick)
	if err != nil || r.Facts["count"] != 2 || r.Facts["via"] != "input" {
		t.Fatalf("hidden input: %v %+v", err, r)
	}
	if got := eval(t, tab, "[...document.getElementById('hiddenfile').files].map(f=>f.name+':'+f.size).join()"); got != "report.txt:5,photo.png:8" {
		t.Fatalf("files: %s", got)
	}
	out, _ := json.Marshal(r)
	if strings.Contains(string(out), "hello") || strings.Contains(string(out), dir) {
		t.Fatalf("upload output shows content or paths: %s", out)
	}
	// Swap after check: the original replaced by a symlink to a secret once the
	// guard let it through. The page reads the bytes that were checked.
	secret := filepath.Join(dir, "id_ed25519")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	os.Remove(a)
	os.Symlink(secret, a)
	if got := eval(t, tab, "document.getElementById('hiddenfile').files[0].text()"); got != "hello" {
		t.Fatalf("the page read %q after the swap, want the checked bytes", got)
	}
	os.Remove(a)
	os.WriteFile(a, []byte("hello"), 0o644)
	// A styled button that opens the chooser.
	eval(t, tab, "document.getElementById('hiddenfile').value = ''")
	r, err = p.Upload(ctx, Locator{Role: "button", Name: "Choose files", Nth: NoNth}, []string{b}, quick)
	if err != nil || r.Facts["via"] != "chooser" {
		t.Fatalf("chooser: %v %+v", err, r)
	}
	if got := eval(t, tab, "document.getElementById('hiddenfile').files.length"); got != "1" {
		t.Fatalf("chooser files: %s", got)
	}
	// A single-file input refuses two files.
	if _, err := p.Upload(ctx, css("#single"), []string{a, b}, quick); reason(err) != "usage" {
		t.Fatalf("single: %v", err)
	}
	// A button that opens no chooser fails, and leaves nothing set.
	short, cancel := context.WithTimeout(ctx, 7*time.Second)
	defer cancel()
	if _, err := p.Upload(short, css("#save"), []string{a}, quick); reason(err) != "upload-failed" {
		t.Fatalf("no chooser: %v", err)
	}
	// The guard runs before anything touches the page.
	if _, err := p.Upload(ctx, css("#single"), []string{"relative.txt"}, quick); reason(err) != "path-refused" {
		t.Fatalf("relative path: %v", err)
	}
}

func TestRefs(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := &session.State{}
	StoreRefs(st, tab.ID, ins.Refs)
	p.Refs = LoadRefs(st)
	ref := ""
	for _, it := range ins.Items {
		if it.Role == "button" && it.Name == "Save draft" {
			ref = it.Ref
		}
	}
	if ref == "" {
		t.Fatalf("no Save draft in %v", ins.Lines(false))
	}
	r, err := p.Click(ctx, Locator{Ref: ref, Nth: NoNth}, ClickOptions{Settle: quick})
	if err != nil || lastEvent(t, tab) != "save draft" || r.Element.Ref != ref {
		t.Fatalf("click %s: %v %v", ref, err, events(t, tab))
	}
	// The page keeps the last few inspects' elements (sessions sharing a tab
	// keep their refs); an older one's refs are stale, never another element.
	for i := 0; i < 7; i++ {
		if _, err := p.Inspect(ctx, InspectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Click(ctx, Locator{Ref: ref, Nth: NoNth}, ClickOptions{Settle: quick}); err != nil || lastEvent(t, tab) != "save draft" {
		t.Fatalf("click %s after 7 more inspects: %v", ref, err)
	}
	if _, err := p.Inspect(ctx, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Click(ctx, Locator{Ref: ref, Nth: NoNth}, ClickOptions{Settle: quick}); reason(err) != "stale-ref" {
		t.Fatalf("click %s after 8 more inspects: %v, want stale-ref", ref, err)
	}
	if ins, err = p.Inspect(ctx, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	StoreRefs(st, tab.ID, ins.Refs)
	p.Refs = LoadRefs(st)
	// An unknown ref.
	if _, err := p.Click(ctx, Locator{Ref: "e9999", Nth: NoNth}, ClickOptions{Settle: quick}); reason(err) != "no-such-ref" {
		t.Fatalf("unknown ref: %v", err)
	}
	// A ref whose node left the DOM.
	var gone string
	for _, it := range ins.Items {
		if it.Name == "Save" && it.Role == "button" {
			gone = it.Ref
		}
	}
	eval(t, tab, "document.getElementById('save').remove(), 1")
	if _, err := p.Click(ctx, Locator{Ref: gone, Nth: NoNth}, ClickOptions{Settle: quick}); reason(err) != "stale-ref" {
		t.Fatalf("removed node: %v", err)
	}
	// After a reload, every ref is stale, even if the same markup is back.
	if _, err := tab.Navigate(ctx, fixtureURL("app.html"), cdp.WaitLoad); err != nil {
		t.Fatal(err)
	}
	p2 := New(tab, tab.ID)
	p2.Refs = p.Refs
	_, err = p2.Click(ctx, Locator{Ref: ref, Nth: NoNth}, ClickOptions{Settle: quick})
	if reason(err) != "stale-ref" || output.ExitCodeFor("stale-ref") != 3 {
		t.Fatalf("after reload: %v", err)
	}
	// Refs are bound to their tab.
	p3 := New(tab, "OTHERTAB")
	p3.Refs = p.Refs
	if _, err := p3.Click(ctx, Locator{Ref: ref, Nth: NoNth}, ClickOptions{Settle: quick}); reason(err) != "no-such-ref" {
		t.Fatalf("other tab: %v", err)
	}
}

func TestInspect(t *testing.T) {
	p, _, ctx := open(t, "app.html")
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(ins.Lines(false), "\n")
	for _, want := range []string{
		"button: Save\n", "button <div>: Div button", "button disabled: Disabled one", "textbox type=email: Email address",
		"textbox type=password: Password", "combobox value=Medium: Size", "checkbox unchecked: I accept the terms",
		"radio checked: Free", "switch <div> unchecked: Dark mode", "button type=file hidden", "button: Shadow button",
		"# Walnut Desk Lamp\n", "# Oak Chair\n",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("inspect lacks %q:\n%s", want, lines)
		}
	}
	if strings.Contains(lines, "hunter2") {
		t.Fatalf("password value listed")
	}
	// --within scopes to one card.
	ins, err = p.Inspect(ctx, InspectOptions{Within: "Walnut Desk Lamp"})
	if err != nil || len(ins.Items) != 1 || ins.Items[0].Ctx != "Walnut Desk Lamp" {
		t.Fatalf("within: %v %v", err, ins.Lines(true))
	}
	// --in scopes to a subtree.
	in := css("form")
	ins, err = p.Inspect(ctx, InspectOptions{In: &in})
	if err != nil || len(ins.Items) < 10 || ins.Items[0].Name != "Email address" {
		t.Fatalf("in: %v %v", err, ins.Lines(false))
	}
}

func TestFrames(t *testing.T) {
	p, tab, ctx := open(t, "frames.html?other="+otherURL)
	// Wait until both frames loaded.
	if _, err := p.Wait(ctx, WaitOptions{Loc: &Locator{Role: "button", Name: "Frame button", Nth: 1}}); err != nil {
		t.Fatalf("wait for frames: %v", err)
	}
	frames, err := p.Frames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oop := false
	for _, f := range frames {
		if strings.HasPrefix(f.URL, otherURL) && f.OOPIF {
			oop = true
		}
	}
	if !oop && !strings.Contains(os.Getenv("DTB_CHROME"), "headless") {
		t.Fatalf("the cross-site frame is not out of process: %+v", frames)
	}
	// Two frame buttons: ambiguous, then each by --nth and by --frame.
	if _, err := p.Click(ctx, Locator{Role: "button", Name: "Frame button", Nth: NoNth}, ClickOptions{Settle: quick}); reason(err) != "ambiguous-match" {
		t.Fatalf("ambiguous over frames: %v", err)
	}
	r, err := p.Click(ctx, Locator{Role: "button", Name: "Frame button", Frame: "otherf", Nth: NoNth}, ClickOptions{Settle: quick})
	if err != nil || r.Element.Frame == nil || !strings.HasPrefix(r.Element.Frame.URL, otherURL) {
		t.Fatalf("click in the OOPIF: %v %+v", err, r)
	}
	// The click landed in the cross-site frame: its button says so.
	if _, err := p.Wait(ctx, WaitOptions{Loc: &Locator{Text: "Clicked in frame", Frame: "otherf", Nth: NoNth}}); err != nil {
		t.Fatalf("the OOPIF click did not land: %v", err)
	}
	// The box is in the top viewport: inside the iframe element's box.
	ob := eval(t, tab, "(r => [r.left, r.top, r.right, r.bottom].map(Math.round))(document.getElementById('other').getBoundingClientRect())")
	var obox [4]int
	json.Unmarshal([]byte(ob), &obox)
	if bx := r.Element.Box; bx[0] < obox[0] || bx[1] < obox[1] || bx[0]+bx[2] > obox[2] || bx[1]+bx[3] > obox[3] {
		t.Fatalf("OOPIF box %v not inside the frame %v", bx, obox)
	}
	r, err = p.Click(ctx, Locator{Text: "Frame button", Frame: "samef", Nth: NoNth}, ClickOptions{Settle: quick})
	if err != nil || eval(t, tab, "document.getElementById('same').contentDocument.getElementById('fb').textContent") != "Clicked in frame" {
		t.Fatalf("same-origin frame: %v %+v", err, r)
	}
	// inspect lists the frames' elements with frame keys, and refs work there.
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil || len(ins.Frames) != 2 {
		t.Fatalf("inspect frames: %v %+v", err, ins)
	}
	st := &session.State{}
	StoreRefs(st, tab.ID, ins.Refs)
	p.Refs = LoadRefs(st)
	var oopRef string
	for _, it := range ins.Items {
		if it.Frame == "f2" && it.Role == "button" {
			oopRef = it.Ref
		}
	}
	if oopRef == "" {
		t.Fatalf("no button in f2: %v", ins.Lines(false))
	}
	if _, err := p.Hover(ctx, Locator{Ref: oopRef, Nth: NoNth}, ClickOptions{Settle: quick}); err != nil {
		t.Fatalf("ref in the OOPIF: %v", err)
	}
	if _, err := p.Locate(ctx, Locator{Role: "button", Name: "Top button", Nth: NoNth}, LocateOptions{Scroll: true}); err != nil {
		t.Fatal(err)
	}
}

func TestWait(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	go func() {
		time.Sleep(200 * time.Millisecond)
		eval(t, tab, "setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id=done>Order placed</p>'), 0), 1")
	}()
	r, err := p.Wait(ctx, WaitOptions{Load: true, Loc: &Locator{Text: "Order placed", Nth: NoNth}, URL: "*/app.html", JS: "document.getElementById('done') !== null", Quiet: 100 * time.Millisecond})
	if err != nil || len(r.Held) != 5 || r.Ms < 200 {
		t.Fatalf("wait: %v %+v", err, r)
	}
	eval(t, tab, "setTimeout(() => document.getElementById('done').remove(), 200), 1")
	if _, err := p.Wait(ctx, WaitOptions{Loc: &Locator{CSS: "#done", Nth: NoNth}, Gone: true}); err != nil {
		t.Fatalf("gone: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancel()
	_, err = p.Wait(short, WaitOptions{Loc: &Locator{CSS: "#never", Nth: NoNth}})
	if reason(err) != "timeout" || output.ExitCodeFor("timeout") != 4 {
		t.Fatalf("timeout: %v", err)
	}
	if obs := output.AsError(err).Details["observed"].(observed); obs.URL == "" || obs.Matches == nil || *obs.Matches != 0 {
		t.Fatalf("observed: %+v", obs)
	}
	for _, c := range []struct {
		url, pat string
		want     bool
	}{{"http://a/b/checkout/x", "*/checkout/*", true}, {"http://a/b", "checkout", false}, {"http://a/b", "a/b", true}, {"http://a/b?x=1", "http://a/?", false}} {
		if URLMatches(c.url, c.pat) != c.want {
			t.Errorf("URLMatches(%q, %q) != %v", c.url, c.pat, c.want)
		}
	}
}

// A form's fields take their context from the heading above the form, not
// from the label of the form's first field; a label that labels nothing still
// titles its card.
func TestInspectContextSkipsFieldLabels(t *testing.T) {
	p, _, ctx := open(t, "labelled.html")
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range ins.Items {
		got[it.Name] = it.Ctx
	}
	want := map[string]string{"Name": "Profile", "Email": "Profile", "Plan": "Profile", "Newsletter": "Profile", "Save": "Profile", "Choose": "Plan A"}
	for name, ctxWant := range want {
		if got[name] != ctxWant {
			t.Errorf("%s: context %q, want %q\n%s", name, got[name], ctxWant, strings.Join(ins.Lines(false), "\n"))
		}
	}
}
