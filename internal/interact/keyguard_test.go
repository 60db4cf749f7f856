package interact

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"

	"github.com/dtb-cli/dtb/internal/output"
)

// typeUntilStopped types 300 characters as key events into the page's
// password field and wants not-typed saying why the input stopped.
func typeUntilStopped(t *testing.T, p *Page, ctx context.Context, why string) *output.Error {
	t.Helper()
	text := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789-", 9)[:300]
	_, err := p.Type(ctx, css("#i"), text, TypeOptions{Keys: true, Settle: quick})
	var oe *output.Error
	if !errors.As(err, &oe) || oe.Reason != "not-typed" {
		t.Fatalf("type into a page that changes under it: %v, want not-typed", err)
	}
	if got := oe.Details["stopped"]; got != why {
		t.Fatalf("stopped: %v, want %s (%v)", got, why, oe)
	}
	typed, _ := oe.Details["typed"].(int)
	if typed <= 0 || typed >= 300 {
		t.Fatalf("typed %v of 300: the page changed after the first key and before the last", oe.Details["typed"])
	}
	return oe
}

// Keys typed into a page that navigates to another origin mid-typing stop at
// the navigation: none lands in the next page (issue 23.1).
func TestKeysStopAtANavigation(t *testing.T) {
	for _, target := range []string{"same origin", "other origin"} {
		t.Run(target, func(t *testing.T) {
			testSession(t)
			to := fixtureURL("catch.html")
			if target == "other origin" {
				to = otherURL + "/catch.html"
			}
			p, tab, ctx := open(t, "navtype.html?to="+to)
			typeUntilStopped(t, p, ctx, "navigated")
			// The next page loads and has its field focused; it got no key.
			deadline := time.Now().Add(5 * time.Second)
			for eval(t, tab, "location.pathname + ':' + document.readyState") != "/catch.html:complete" {
				if time.Now().After(deadline) {
					t.Fatal("the page did not navigate")
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			if v := eval(t, tab, "document.getElementById('c').value + '|' + window.keys"); v != "|0" {
				t.Fatalf("the next page got keys: value|keys = %q", v)
			}
		})
	}
}

// Keys stop when the page moves the focus to another field.
func TestKeysStopWhenTheFocusMoves(t *testing.T) {
	p, tab, ctx := open(t, "navtype.html?move=1")
	typeUntilStopped(t, p, ctx, "focus-moved")
	if v := eval(t, tab, "document.getElementById('other').value"); v != "" {
		t.Fatalf("the other field got %q", v)
	}
}

// TestTypeReadsBackWhenTheGuardCannotInstall: a page that breaks the key
// guard's install (its document's hasFocus throws) is still typed into and
// read back: a field that rejects the text fails not-typed instead of
// passing unread.
func TestTypeReadsBackWhenTheGuardCannotInstall(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	eval(t, tab, `(() => {
	  Document.prototype.hasFocus = () => { throw new Error('no focus for you'); };
	  const i = document.createElement('input');
	  i.id = 'rejects';
	  i.addEventListener('input', () => { i.value = ''; });
	  document.body.prepend(i);
	  return 1;
	})()`)
	if _, err := p.Type(ctx, css("#rejects"), "hello", TypeOptions{Settle: quick}); reason(err) != "not-typed" {
		t.Fatalf("typing into a field that rejects the text, on a page that broke the guard: %v", err)
	}
	eval(t, tab, "document.getElementById('rejects').remove(), 1")
	if _, err := p.Type(ctx, css("#name"), "hello", TypeOptions{Settle: quick, Clear: true}); err != nil {
		t.Fatalf("typing into a plain field on that page: %v", err)
	}
}

// TestTypeOnADocumentThatKeepsNoLibrary: the key guard lives in the library
// the document keeps; a document that keeps nothing (not extensible) is
// still typed into key by key and read back, a field that rejects the text
// still fails not-typed, and the guard still stops at a navigation.
func TestTypeOnADocumentThatKeepsNoLibrary(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	eval(t, tab, `(() => {
	  const i = document.createElement('input');
	  i.id = 'rejects';
	  i.addEventListener('input', () => { i.value = ''; });
	  document.body.prepend(i);
	  Object.preventExtensions(document);
	  return 1;
	})()`)
	res, err := p.Type(ctx, css("#name"), "hello", TypeOptions{Settle: quick, Clear: true, Keys: true})
	if err != nil {
		t.Fatalf("typing key by key: %v", err)
	}
	if v, ok := res.Facts["verified"]; ok && v == false {
		t.Fatalf("the text was not read back: %+v", res.Facts)
	}
	if got := eval(t, tab, "document.getElementById('name').value"); got != "hello" {
		t.Fatalf("the field holds %q", got)
	}
	if _, err := p.Type(ctx, css("#rejects"), "hello", TypeOptions{Settle: quick}); reason(err) != "not-typed" {
		t.Fatalf("typing into a field that rejects the text: %v", err)
	}
}

// focusForTyping focuses #name of forms.html for typing, as Type does,
// and returns what the read-back needs: the focus outcome and its guard.
func focusForTyping(t *testing.T, p *Page, ctx context.Context) (*navWatch, *outcome, *keyGuard) {
	t.Helper()
	w := p.watch(ctx)
	t.Cleanup(w.stop)
	out, err := p.act(ctx, css("#name"), needVisible, action{"kind": "focus", "clear": true, "typing": true, "text": "Grace", "guard": true})
	if err != nil {
		t.Fatal(err)
	}
	var f focusRes
	json.Unmarshal(out.act, &f)
	if !f.Focused || f.Guard == nil {
		t.Fatalf("focus for typing: %s", out.act)
	}
	g, err := p.keptGuardOf(ctx, out.frame, f.Guard)
	if err != nil || g.id == 0 {
		t.Fatalf("no kept guard: %v", err)
	}
	t.Cleanup(func() { g.end(context.Background()) })
	return w, out, g
}

// TestReadBackWaitsForTheInsert: the read-back sent before Input.insertText
// reads the field only after the text is in, however late the insert
// reaches the page; one whose insert brought no input event reads the field
// as it is once the insert is answered (released); a failed insert fails it.
func TestReadBackWaitsForTheInsert(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	readBack := func(ctx context.Context, want string, inserted func() error) error {
		t.Helper()
		w, out, g := focusForTyping(t, p, ctx)
		rb, err := p.beginReadBack(ctx, out, g, want, false, false)
		if err != nil {
			t.Fatal(err)
		}
		return p.readBackAfter(ctx, w, out, g, want, false, false, &Result{}, rb, inserted)
	}

	late := func() error {
		time.Sleep(300 * time.Millisecond) // the read-back waits at the page by now
		_, err := proto.Call(ctx, p.tab, input.InsertText, input.InsertTextParams{Text: "Grace"})
		return err
	}
	if err := readBack(ctx, "Grace", late); err != nil {
		t.Fatalf("a read-back that ran before the insert: %v", err)
	}
	if v := eval(t, tab, "document.getElementById('name').value"); v != "Grace" {
		t.Fatalf("the field holds %q", v)
	}

	nothing := func() error { return nil } // answered, and no input came
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := readBack(short, "Grace Hopper", nothing)
	if reason(err) != "not-typed" || output.AsError(err).Details["value"] != "Grace" {
		t.Fatalf("read-back of an insert that brought no input: %v, want not-typed holding Grace", err)
	}

	cut := errors.New("the insert failed")
	if err := readBack(ctx, "Grace", func() error { return cut }); err != cut {
		t.Fatalf("read-back of a failed insert: %v", err)
	}
}

// TestTypeIntoAFieldThatCancelsTheText: a page that cancels the insert
// (beforeinput) leaves the field as it was: not-typed, at once.
func TestTypeIntoAFieldThatCancelsTheText(t *testing.T) {
	p, tab, ctx := open(t, "forms.html")
	eval(t, tab, `(() => {
	  const i = document.createElement('input');
	  i.id = 'veto';
	  i.value = 'kept';
	  i.addEventListener('beforeinput', e => e.preventDefault());
	  document.body.prepend(i);
	  return 1;
	})()`)
	start := time.Now()
	_, err := p.Type(ctx, css("#veto"), "hello", TypeOptions{Settle: quick, Clear: true})
	if reason(err) != "not-typed" || output.AsError(err).Details["value"] != "kept" {
		t.Fatalf("typing into a field that cancels the text: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("not-typed took %v", d)
	}
}

// TestTypeInFrames: a field in a same-origin frame and one in a cross-site
// frame are typed into and read back there (a field that throws the text
// away fails not-typed), the read-back sent ahead to the top document being
// let go.
func TestTypeInFrames(t *testing.T) {
	p, tab, ctx := open(t, "frames.html?other="+otherURL)
	eval(t, tab, "document.getElementById('same').src = 'fieldframe.html', document.getElementById('other').src = '"+otherURL+"/fieldframe.html', 1")
	for _, fr := range []string{"samef", "otherf"} {
		field := Locator{CSS: "#ff", Frame: fr, Nth: NoNth}
		if _, err := p.Wait(ctx, WaitOptions{Loc: &field}); err != nil {
			t.Fatalf("%s: wait for the field: %v", fr, err)
		}
		r, err := p.Type(ctx, field, "Grace", TypeOptions{Settle: quick, Clear: true})
		if err != nil || r.Facts["verified"] == false || r.Element.Frame == nil {
			t.Fatalf("%s: type: %v %+v", fr, err, r)
		}
		if _, err := p.Type(ctx, Locator{CSS: "#rej", Frame: fr, Nth: NoNth}, "Hopper", TypeOptions{Settle: quick}); reason(err) != "not-typed" {
			t.Fatalf("%s: a field that throws the text away: %v", fr, err)
		}
	}
}

// TestReadBackAheadIsDropped: a read-back sent ahead of a focus call that
// leaves nothing (it failed, or ran in another document) answers at once
// when dropped, with nothing to read.
func TestReadBackAheadIsDropped(t *testing.T) {
	p, _, ctx := open(t, "forms.html")
	if _, err := p.Type(ctx, css("#name"), "Ada", TypeOptions{Settle: quick, Clear: true}); err != nil {
		t.Fatal(err) // the document keeps the library from here on
	}
	a := p.readBackAhead(ctx)
	if a == nil {
		t.Fatal("no read-back ahead on a document that keeps the library")
	}
	a.drop(ctx, p)
	select {
	case ans := <-a.rb.call.done:
		if ans.err != nil || ans.missed || !a.rb.r.Skip {
			t.Fatalf("dropped read-back: %+v %+v", ans, a.rb.r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a dropped read-back did not answer")
	}
}
