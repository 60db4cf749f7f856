package session

import (
	"github.com/dtb-cli/dtb/internal/cdp"
	"os"
	"strings"
	"testing"
)

// TestPDF prints a fixture page: a real PDF, mode 0600, the page count of
// the document's own length, landscape swapping the sides.
func TestPDF(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("tall.html"), cdp.WaitLoad)
	doc, err := p.PDF(ctx, cdp.PDFOptions{Paper: "a4", Margin: -1})
	if err != nil {
		t.Fatal(err)
	}
	// tall.html is many viewports tall: more than one page.
	if doc.Pages < 2 || doc.Width != 8.27 || doc.Landscape {
		t.Errorf("pdf: %d pages, %+v", doc.Pages, doc)
	}
	one, err := p.PDF(ctx, cdp.PDFOptions{Landscape: true, Background: true, PageRanges: "1", Margin: 0})
	if err != nil {
		t.Fatal(err)
	}
	if one.Pages != 1 || one.Width != 11 || one.Height != 8.5 {
		t.Errorf("page range 1, landscape: %+v", one)
	}
	path, err := WritePDF(doc, "", "test")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.HasSuffix(path, ".pdf") {
		t.Errorf("file %s: %v %v", path, st.Mode(), err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "%PDF-") {
		t.Errorf("not a PDF")
	}
	for _, bad := range []cdp.PDFOptions{{Paper: "napkin"}, {Scale: 3}, {PageRanges: "9-7"}} {
		if _, err := p.PDF(ctx, bad); reason(err) != "usage" {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestHistory goes back, forward and reloads; the fixture's own log of how
// each document arrived is the record.
func TestHistory(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("history.html?a"), cdp.WaitLoad)
	if _, err := p.Navigate(ctx, fixture("history.html?b"), cdp.WaitLoad); err != nil {
		t.Fatal(err)
	}
	loads := func() string {
		raw, err := p.Evaluate(ctx, "sessionStorage.getItem('loads')", false)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	back, err := p.GoHistory(ctx, -1, cdp.WaitLoad)
	if err != nil {
		t.Fatal(err)
	}
	if back.URL != fixture("history.html?a") || back.From != fixture("history.html?b") || back.Title != "dtb fixture: history" || !back.CanGoForward {
		t.Errorf("back: %+v", back)
	}
	fwd, err := p.GoHistory(ctx, 1, cdp.WaitLoad)
	if err != nil {
		t.Fatal(err)
	}
	if fwd.URL != fixture("history.html?b") || fwd.CanGoForward || !fwd.CanGoBack {
		t.Errorf("forward: %+v", fwd)
	}
	if _, err := p.GoHistory(ctx, 1, cdp.WaitLoad); reason(err) != "no-history-entry" {
		t.Errorf("forward at the end: %v", err)
	}
	rl, err := p.Reload(ctx, true, cdp.WaitLoad)
	if err != nil || rl.URL != fixture("history.html?b") || rl.Status == nil || *rl.Status != 200 {
		t.Fatalf("reload: %v %+v", err, rl)
	}
	got := loads()
	// Back and forward either reload the document or restore it from the
	// back/forward cache; both are told apart by the page.
	for _, want := range []string{`/history.html?a:navigate`, `/history.html?b:navigate`, `/history.html?b:reload`} {
		if !strings.Contains(got, want) {
			t.Errorf("the page's log %s lacks %s", got, want)
		}
	}
	if strings.Count(got, "back_forward")+strings.Count(got, "bfcache") != 2 {
		t.Errorf("the page's log %s: want two history arrivals", got)
	}
	if back.BackForwardCache != strings.Contains(got, "?a:bfcache") {
		t.Errorf("back reported backForwardCache=%v; the page says %s", back.BackForwardCache, got)
	}
	// A same-document entry: pushState, then back without a load.
	if _, err := p.Evaluate(ctx, "history.pushState({}, '', '?c'), 1", false); err != nil {
		t.Fatal(err)
	}
	sd, err := p.GoHistory(ctx, -1, cdp.WaitLoad)
	if err != nil || !sd.SameDocument || sd.URL != fixture("history.html?b") {
		t.Errorf("same-document back: %v %+v", err, sd)
	}
	for i := 0; i < 5; i++ {
		if _, err = p.GoHistory(ctx, -1, cdp.WaitLoad); err != nil {
			break
		}
	}
	if reason(err) != "no-history-entry" {
		t.Errorf("back past the first entry: %v", err)
	}
}
