package commands

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestViewportCLI: the tabs dtb opens (and the launch's own tab) have a
// 1280×900 viewport, --viewport / DTB_VIEWPORT another, without changing the
// tabs already open; a bad value is a usage error before any browser. Both
// the headless shell and Chromium (whose window adds a frame).
func TestViewportCLI(t *testing.T) {
	e := newCLI(t)
	e.Run(t, "open", "about:blank", "--viewport", "12x").Fails(t, 2, "usage")
	e.RunWith(t, []string{"DTB_VIEWPORT=wide"}, "", "eval", "1").Fails(t, 2, "usage")
	if _, err := readSession(e); err == nil {
		t.Fatal("a usage error launched a browser")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "interact"))))
	defer srv.Close()
	size := func(t *testing.T, session string, extra ...string) string {
		t.Helper()
		r := e.Run(t, append([]string{"eval", "[innerWidth, innerHeight].join('x')", "-r", "--session", session}, extra...)...)
		r.Exit(t, 0)
		return strings.TrimSpace(r.Stdout)
	}
	b := browsertest.Find()
	for _, c := range []struct{ name, bin string }{{"shell", b.HeadlessShell}, {"chromium", b.Chromium}} {
		t.Run(c.name, func(t *testing.T) {
			browsertest.Need(t, c.bin, c.name)
			s := "vp-" + c.name
			r := e.Run(t, "browser", "launch", "--chrome", c.bin, "--session", s)
			r.Exit(t, 0)
			var launched struct{ PID int }
			r.Decode(t, &launched)
			defer func() {
				e.Run(t, "browser", "stop", "--session", s)
				browsertest.Kill(launched.PID)
			}()
			if got := size(t, s); got != "1280x900" {
				t.Errorf("the launch's tab: %s", got)
			}
			e.Run(t, "open", srv.URL+"/next.html", "--session", s).Exit(t, 0)
			if got := size(t, s); got != "1280x900" {
				t.Errorf("a new tab: %s", got)
			}
			r = e.Run(t, "open", srv.URL+"/next.html", "--session", s, "--viewport", "1024x700", "--jq", ".tab.alias", "-r")
			r.Exit(t, 0)
			small := strings.TrimSpace(r.Stdout)
			if got := size(t, s, "--tab", small); got != "1024x700" {
				t.Errorf("--viewport 1024x700: %s", got)
			}
			r = e.RunWith(t, []string{"DTB_VIEWPORT=800x600"}, "", "open", srv.URL+"/next.html", "--session", s, "--jq", ".tab.alias", "-r")
			r.Exit(t, 0)
			if got := size(t, s, "--tab", strings.TrimSpace(r.Stdout)); got != "800x600" {
				t.Errorf("DTB_VIEWPORT=800x600: %s", got)
			}
			// The tabs opened before keep theirs.
			if got := size(t, s, "--tab", "t2"); got != "1280x900" {
				t.Errorf("the earlier tab after others were sized: %s", got)
			}
		})
	}
}
