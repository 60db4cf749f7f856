package pagedata

import (
	"strings"
	"testing"
)

// TestCookies: set, read and clear cookies; the page's own document.cookie
// is the record; a refused cookie's value never reaches the error.
func TestCookies(t *testing.T) {
	s := testSession(t)
	p := openTab(t, s, fixture("console.html"))
	ctx := tctx(t)
	res, err := SetCookie(ctx, p, CookieSpec{Name: "flavour", Value: "oatmeal-s3cret", Expires: "2h", SameSite: "Lax"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 1 || res.Cookies[0].Value != "oatmeal-s3cret" || res.Cookies[0].Expires == nil || res.Cookies[0].SameSite != "Lax" || res.Cookies[0].Domain != "127.0.0.1" {
		t.Errorf("set: %+v", res.Cookies)
	}
	if _, err := SetCookie(ctx, p, CookieSpec{Name: "hidden", Value: "h1", HTTPOnly: true, Path: "/"}); err != nil {
		t.Fatal(err)
	}
	var docCookie string
	evalJSON(t, p, "document.cookie", &docCookie)
	if docCookie != "flavour=oatmeal-s3cret" {
		t.Errorf("the page sees %q (the httpOnly cookie must stay hidden from it)", docCookie)
	}
	evalJSON(t, p, "document.cookie = 'fromPage=1; path=/', 1", nil)
	all, err := Cookies(ctx, p, nil, "")
	if err != nil || all.Count != 3 {
		t.Fatalf("list: %v %+v", err, all)
	}
	one, err := Cookies(ctx, p, nil, "hidden")
	if err != nil || one.Count != 1 || !one.Cookies[0].HTTPOnly || one.Cookies[0].Expires != nil {
		t.Errorf("get hidden: %v %+v", err, one)
	}
	if _, err := Cookies(ctx, p, nil, "nope"); reasonOf(err) != "no-such-cookie" {
		t.Errorf("absent cookie: %v", err)
	}
	// Secure=false with SameSite=None is refused; the error keeps the value out.
	_, err = SetCookie(ctx, p, CookieSpec{Name: "bad", Value: "topsecret-value", SameSite: "None"})
	if reasonOf(err) != "cookie-rejected" || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("rejected cookie: %v", err)
	}
	if _, err := Cookies(ctx, p, []string{"file:///etc/passwd"}, ""); reasonOf(err) != "usage" {
		t.Errorf("file URL: %v", err)
	}
	cl, err := ClearCookies(ctx, p, nil, "flavour")
	if err != nil || cl.Cleared != 1 {
		t.Fatalf("clear one: %v %+v", err, cl)
	}
	evalJSON(t, p, "document.cookie", &docCookie)
	if docCookie != "fromPage=1" {
		t.Errorf("after clearing flavour the page sees %q", docCookie)
	}
	if cl, err = ClearCookies(ctx, p, nil, ""); err != nil || cl.Cleared != 2 {
		t.Fatalf("clear all: %v %+v", err, cl)
	}
	if all, _ = Cookies(ctx, p, nil, ""); all.Count != 0 {
		t.Errorf("after clear: %+v", all)
	}
}

// TestStorage: local and session storage against the page's own view.
func TestStorage(t *testing.T) {
	s := testSession(t)
	p := openTab(t, s, fixture("console.html"))
	ctx := tctx(t)
	evalJSON(t, p, "localStorage.setItem('fromPage', 'p1'), sessionStorage.setItem('tabOnly', 's1'), 1", nil)
	if _, err := Storage(ctx, p, "local", "set", "token", "abc \"quoted\" ${x}"); err != nil {
		t.Fatal(err)
	}
	var v string
	evalJSON(t, p, "localStorage.getItem('token')", &v)
	if v != "abc \"quoted\" ${x}" {
		t.Errorf("the page reads %q", v)
	}
	list, err := Storage(ctx, p, "local", "list", "", "")
	if err != nil || *list.Count != 2 || list.Items["fromPage"] != "p1" || list.Origin != fixtureBase {
		t.Errorf("list: %v %+v", err, list)
	}
	got, err := Storage(ctx, p, "session", "get", "tabOnly", "")
	if err != nil || *got.Value != "s1" {
		t.Errorf("session get: %v %+v", err, got)
	}
	if _, err := Storage(ctx, p, "session", "get", "token", ""); reasonOf(err) != "no-such-key" {
		t.Errorf("absent key: %v", err)
	}
	if r, err := Storage(ctx, p, "local", "remove", "fromPage", ""); err != nil || !*r.Removed {
		t.Errorf("remove: %v %+v", err, r)
	}
	if r, err := Storage(ctx, p, "local", "clear", "", ""); err != nil || *r.Count != 1 {
		t.Errorf("clear: %v %+v", err, r)
	}
	var n int
	evalJSON(t, p, "localStorage.length + sessionStorage.length", &n)
	if n != 1 {
		t.Errorf("after clearing local storage the page holds %d entries, want the session one", n)
	}
	// An opaque origin may not use storage.
	if _, err := p.Navigate(ctx, "data:text/html,<p>x", "load"); err != nil {
		t.Fatal(err)
	}
	if _, err := Storage(ctx, p, "local", "list", "", ""); reasonOf(err) != "storage-unavailable" {
		t.Errorf("data: URL: %v", err)
	}
}
