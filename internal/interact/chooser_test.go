package interact

import (
	"github.com/dtb-cli/dtb/internal/cdp"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClickReportsFileChooser: a click that opens a file chooser reports it
// (multiple, accept) with the upload that answers it, and on the same
// connection the upload that follows still gets its chooser.
func TestClickReportsFileChooser(t *testing.T) {
	p, tab, ctx := open(t, "dialogs.html")
	r, err := p.Click(ctx, css("#avatar"), ClickOptions{Settle: quick})
	if err != nil {
		t.Fatal(err)
	}
	fc, _ := r.Facts["fileChooser"].(map[string]any)
	if fc == nil || fc["multiple"] != false || fc["accept"] != "image/png,image/jpeg" {
		t.Fatalf("click's fileChooser: %+v", r.Facts)
	}
	if h, _ := r.Facts["hint"].(string); !strings.Contains(h, `dtb upload --css "#avatar"`) {
		t.Fatalf("hint: %q", h)
	}
	if got := eval(t, tab, "window.log.join(' ')"); got != "" {
		t.Fatalf("the page logged %q after a click only", got)
	}
	f := filepath.Join(t.TempDir(), "me.png")
	os.WriteFile(f, []byte("png"), 0o644)
	u, err := p.Upload(ctx, css("#avatar"), []string{f}, quick)
	if err != nil || u.Facts["via"] != "chooser" {
		t.Fatalf("upload after the click: %v %+v", err, u)
	}
	if got := eval(t, tab, "window.log.join(' ')"); got != "files:1" {
		t.Fatalf("the page logged %q after the upload", got)
	}
	// A click that opens no chooser reports none.
	r, err = p.Click(ctx, css("h1"), ClickOptions{Settle: quick})
	if err != nil || r.Facts["fileChooser"] != nil {
		t.Fatalf("plain click: %v %+v", err, r.Facts)
	}
}

// TestTypeCutByDialog: typing that a dialog cuts short (the page alerts on
// the second key, so the rest is never typed) returns with the dialog and
// says it is unverified, not a plain success; the page's field holds what
// was typed before the dialog.
func TestTypeCutByDialog(t *testing.T) {
	p, tab, ctx := open(t, "dialogs.html")
	w := tab.WatchDialogs(ctx, cdp.DialogPolicy{})
	defer w.Stop()
	dctx, cancel := w.Context(ctx)
	defer cancel()
	r, err := p.Type(dctx, css("#shout"), "abc", TypeOptions{Keys: true, Settle: quick})
	if err != nil {
		t.Fatalf("type cut by a dialog: %v", err)
	}
	if d := w.Open(); d == nil || d.Message != "b pressed" {
		t.Fatalf("the dialog: %+v", d)
	}
	if _, err := tab.AnswerDialog(ctx, w.Open(), "dismiss", ""); err != nil {
		t.Fatal(err)
	}
	if r.Facts["verified"] != false {
		t.Fatalf("a type cut short claims success: %+v", r.Facts)
	}
	if got := eval(t, tab, "document.getElementById('shout').value"); got == "abc" {
		t.Fatalf("the field holds %q: the dialog did not cut the typing", got)
	}
}
