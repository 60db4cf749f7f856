package interact

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// One headless Chromium per test binary, a new tab per test, fixtures served
// from testdata/interact by httptest on 127.0.0.1 (and a second server reached
// as localhost, a different site, for out-of-process frames).

var (
	hOnce    sync.Once
	hSess    *cdp.Session
	hErr     error
	hStateD  string
	hFix     *httptest.Server // 127.0.0.1
	hOther   *httptest.Server // served as localhost:<port>
	otherURL string
)

func TestMain(m *testing.M) {
	state, _ := os.MkdirTemp("", "dtb-interact-state-")
	cache, _ := os.MkdirTemp("", "dtb-interact-cache-")
	os.Setenv("DTB_STATE_DIR", state)
	os.Setenv("DTB_CACHE_DIR", cache)
	hStateD = state
	code := m.Run()
	if hSess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		hSess.StopBrowser(ctx)
		cancel()
		hSess.Close()
	}
	if hFix != nil {
		hFix.Close()
	}
	if hOther != nil {
		hOther.Close()
	}
	os.RemoveAll(state)
	os.RemoveAll(cache)
	os.Exit(code)
}

func chromeBinary() string {
	// The full browser first: it isolates sites, so the cross-site frame of the
	// fixtures is out of process (the headless shell keeps it in process).
	for _, b := range []string{os.Getenv("DTB_CHROME"), "chromium", "google-chrome", "chromium-headless-shell", "/usr/lib/chromium/chromium-headless-shell"} {
		if b == "" {
			continue
		}
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

func fixtures() http.Handler {
	return http.FileServer(http.Dir(filepath.Join("..", "..", "..", "testdata", "interact")))
}

// session launches the shared browser (once) and the fixture servers.
func session(t *testing.T) *cdp.Session {
	t.Helper()
	hOnce.Do(func() {
		bin := chromeBinary()
		if bin == "" {
			hErr = errNoChrome
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		hSess, hErr = cdp.Open(ctx, cdp.Config{Session: "interact-test", StateDir: hStateD, Chrome: bin})
		if hErr != nil {
			return
		}
		if _, _, hErr = hSess.LaunchBrowser(ctx); hErr != nil {
			return
		}
		hFix = httptest.NewServer(fixtures())
		hOther = httptest.NewServer(fixtures())
		_, port, _ := net.SplitHostPort(hOther.Listener.Addr().String())
		otherURL = "http://localhost:" + port
	})
	if hErr == errNoChrome {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found (CI=true: browser tests must run)")
		}
		t.Skip("no Chromium found")
	}
	if hErr != nil {
		t.Fatalf("browser: %v", hErr)
	}
	return hSess
}

type noChrome struct{}

func (noChrome) Error() string { return "no chromium" }

var errNoChrome error = noChrome{}

// fixtureURL is the URL of a fixture page; {{other}} in query values is
// replaced by the cross-site server's origin.
func fixtureURL(name string) string {
	return hFix.URL + "/" + strings.TrimPrefix(name, "/")
}

// newTab opens url in a new tab and returns a connected page; the tab is
// closed when the test ends.
func newTab(t *testing.T, url string) *cdp.Page {
	t.Helper()
	s := session(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ti, err := s.NewTab(ctx, cdp.NewTabOptions{})
	if err != nil {
		t.Fatalf("new tab: %v", err)
	}
	p, err := s.Page(ctx, cdp.TabSelector{Tab: ti.ID})
	if err != nil {
		t.Fatalf("page: %v", err)
	}
	t.Cleanup(func() {
		p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if bc, err := s.BrowserConn(ctx); err == nil {
			bc.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": ti.ID}, nil)
		}
	})
	if url != "" {
		if _, err := p.Navigate(ctx, url, cdp.WaitLoad); err != nil {
			t.Fatalf("navigate %s: %v", url, err)
		}
	}
	return p
}
