package interact

import (
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
