package interact

import (
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/session"
)

// libNames lists the library properties the page's document holds, as the
// page itself sees them.
func libNames(t *testing.T, tab *cdp.Page) string {
	return eval(t, tab, "Object.getOwnPropertyNames(document).filter(n => n.startsWith('__dtb_') && typeof document[n] === 'function').join(',')")
}

// The library is sent once per document: the first action leaves it on the
// document, the next dtb (a new Page on the same tab) calls it there
// without sending it, and a new document gets it again.
func TestLibraryKeptPerDocument(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	if got := libNames(t, tab); got != "" {
		t.Fatalf("a fresh document already holds %q", got)
	}
	if _, err := p.Click(ctx, css("#save"), ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	key := libKeyFor(tab.ID, p.top.docObj)
	if got := libNames(t, tab); got != key {
		t.Fatalf("after an action the document holds %q, want %q", got, key)
	}
	if !p.top.sentLib {
		t.Fatal("the first action did not send the library")
	}
	// The next process, on its own connection: the library is called where
	// it is.
	conn2, err := testSession(t).Page(ctx, session.TabSelector{Tab: tab.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	p2 := New(conn2, tab.ID)
	defer p2.Close()
	if _, err := p2.Click(ctx, css("#save2"), ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if p2.top.sentLib {
		t.Fatal("the library was sent again to a document that holds it")
	}
	if got := strings.Join(events(t, tab), ","); got != "save,save draft" {
		t.Fatalf("the page recorded %q", got)
	}
	// A new document starts without it and gets it on the next action.
	if _, err := tab.Navigate(ctx, fixtureURL("app.html"), cdp.WaitLoad); err != nil {
		t.Fatal(err)
	}
	p3 := New(tab, tab.ID)
	defer p3.Close()
	if _, err := p3.Click(ctx, css("#save"), ClickOptions{Settle: quick}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events(t, tab), ","); got != "save" {
		t.Fatalf("after the reload the page recorded %q", got)
	}
	key3 := libKeyFor(tab.ID, p3.top.docObj)
	if got := libNames(t, tab); got != key3 || !p3.top.sentLib {
		t.Fatalf("the new document holds %q (sent: %v)", got, p3.top.sentLib)
	}
	// What the old document showed the page does not name the new one's.
	if key3 == key {
		t.Fatalf("a new document's library has the old one's name %q", key)
	}
}

// A document where the library cannot stay (the name is taken) gets the
// whole library on every call, and actions work as before.
func TestLibraryNotKept(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	top, err := p.topFrame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := libKeyFor(tab.ID, top.docObj)
	eval(t, tab, "Object.defineProperty(document, '"+key+"', { value: 1 }), 1")
	for _, sel := range []string{"#save", "#save2"} {
		if _, err := p.Click(ctx, css(sel), ClickOptions{Settle: quick}); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(events(t, tab), ","); got != "save,save draft" {
		t.Fatalf("the page recorded %q", got)
	}
	if !p.top.libUnkept {
		t.Fatal("the library was not found unkept")
	}
}
