package session

import (
	"context"
	"fmt"
	"github.com/dtb-cli/dtb/internal/browser"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// One headless-shell browser per test binary, attached to with --cdp by most
// tests; a fixture server on 127.0.0.1 serving testdata/pages.
var (
	shared   *browsertest.Browser
	fixtures *httptest.Server
	bins     = browsertest.Find()
)

func TestMain(m *testing.M) {
	browsertest.Main(m, func() error {
		mux := http.NewServeMux()
		mux.Handle("/", http.FileServer(http.Dir(filepath.Join("..", "..", "testdata", "pages"))))
		mux.HandleFunc("/__slow__", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		})
		mux.HandleFunc("/__status__/", func(w http.ResponseWriter, r *http.Request) {
			var code int
			fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/__status__/"), "%d", &code)
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(code)
			fmt.Fprintf(w, "<title>status %d</title><p>status %d</p>", code, code)
		})
		fixtures = browsertest.Serve(mux)
		var err error
		shared, err = browsertest.Preferred()
		return err
	})
}

func needBrowser(t *testing.T) {
	t.Helper()
	browsertest.Need(t, bins.Preferred(), "Chromium")
}

// attached opens a session (own state dir) attached to the shared browser.
func attached(t *testing.T) *Session {
	t.Helper()
	needBrowser(t)
	t.Setenv("DTB_CACHE_DIR", t.TempDir())
	s, err := Open(context.Background(), Config{StateDir: t.TempDir(), CDP: shared.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOwned(t, s); s.Close() })
	return s
}

// closeOwned closes the tabs a test's session opened, so none leaks into the
// next test.
func closeOwned(t *testing.T, s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := s.st.load()
	if err != nil || st.Browser == nil || !st.Browser.Attached {
		return
	}
	for id := range st.Tabs {
		browser.HTTPJSON(ctx, http.MethodGet, shared.Endpoint, "/json/close/"+id, nil, nil)
	}
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func fixture(path string) string { return fixtures.URL + "/" + strings.TrimPrefix(path, "/") }

// foreignTab opens a tab behind dtb's back, as a user would.
func foreignTab(t *testing.T) string {
	t.Helper()
	var ti browser.TargetInfo
	if err := browser.HTTPJSON(tctx(t), http.MethodPut, shared.Endpoint, "/json/new?about:blank", nil, &ti); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		browser.HTTPJSON(context.Background(), http.MethodGet, shared.Endpoint, "/json/close/"+ti.ID, nil, nil)
	})
	return ti.ID
}

func pageExists(t *testing.T, id string) bool {
	t.Helper()
	pages, err := browser.ListPagesHTTP(tctx(t), shared.Endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if p.ID == id {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
