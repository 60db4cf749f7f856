package interact

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/session"
)

// One headless Chromium per test binary (browsertest.Shared), a new tab per
// test, fixtures served from testdata/interact by httptest on 127.0.0.1 (and a
// second server reached as localhost, a different site, for out-of-process
// frames).

var (
	hOnce    sync.Once
	hSess    *session.Session
	hErr     error
	hFix     *httptest.Server // 127.0.0.1
	hOther   *httptest.Server // served as localhost:<port>
	otherURL string
)

func TestMain(m *testing.M) { browsertest.Main(m, nil) }

// chromeBinary is DTB_CHROME, else the full browser first: it isolates sites,
// so the cross-site frame of the fixtures is out of process (the headless
// shell keeps it in process).
func chromeBinary() string {
	b := browsertest.Find()
	return cmp.Or(b.Chrome, b.Full())
}

func fixtures() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("..", "..", "testdata", "interact"))))
	// /__delay__?ms=N answers "done" after N ms: a slow API for settle tests.
	mux.HandleFunc("/__delay__", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, "done")
	})
	return mux
}

// session attaches (once) to the shared browser and starts the fixture servers.
func testSession(t *testing.T) *session.Session {
	t.Helper()
	b := browsertest.Shared(t, chromeBinary())
	hOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		hSess, hErr = session.Open(ctx, session.Config{Session: "interact-test", StateDir: os.Getenv("DTB_STATE_DIR"), CDP: b.Endpoint})
		if hErr != nil {
			return
		}
		hFix = browsertest.Serve(fixtures())
		hOther = browsertest.Serve(fixtures())
		_, port, _ := net.SplitHostPort(hOther.Listener.Addr().String())
		otherURL = "http://localhost:" + port
	})
	if hErr != nil {
		t.Fatalf("session: %v", hErr)
	}
	return hSess
}

// fixtureURL is the URL of a fixture page; {{other}} in query values is
// replaced by the cross-site server's origin.
func fixtureURL(name string) string {
	return hFix.URL + "/" + strings.TrimPrefix(name, "/")
}

// newTab opens url in a new tab and returns a connected page; the tab is
// closed when the test ends.
func newTab(t *testing.T, url string) *cdp.Page {
	t.Helper()
	s := testSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ti, err := s.NewTab(ctx, session.NewTabOptions{})
	if err != nil {
		t.Fatalf("new tab: %v", err)
	}
	p, err := s.Page(ctx, session.TabSelector{Tab: ti.ID})
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
