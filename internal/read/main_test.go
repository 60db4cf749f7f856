package read

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/browsertest/sessiontest"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/session"
)

// One browser per binary and test binary (browsertest.Shared): the headless
// shell (shared by most tests) and, for the out-of-process frame tests, full
// Chromium, launched on first use. Fixtures come from testdata/ on 127.0.0.1
// (also reachable as localhost:<port>, another origin and site).
var (
	fixtureBase string // http://127.0.0.1:PORT
	fixturePort int
	binaries    = map[string]string{} // "headless-shell", "chromium" → path
)

func TestMain(m *testing.M) {
	bins := browsertest.Find()
	binaries["headless-shell"], binaries["chromium"] = bins.HeadlessShell, bins.Chromium
	browsertest.Main(m, func() error {
		srv := browsertest.Serve(fixtureHandler())
		fixturePort = srv.Listener.Addr().(*net.TCPAddr).Port
		fixtureBase = fmt.Sprintf("http://127.0.0.1:%d", fixturePort)
		return nil
	})
}

func fixtureHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("..", "..", "testdata"))))
	mux.HandleFunc("/__slow__", func(w http.ResponseWriter, r *http.Request) {
		// A resource that never finishes: the page never fires load.
		select {
		case <-r.Context().Done():
		case <-time.After(60 * time.Second):
		}
	})
	mux.HandleFunc("/__loading__", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!DOCTYPE html><title>never loads</title><p>Still loading text.</p><img src="/__slow__">`)
	})
	return mux
}

// browser returns the running browser of kind ("headless-shell" or
// "chromium"; "" for the preferred one), launching it on first use.
func browser(t *testing.T, kind string) *browsertest.Browser {
	t.Helper()
	if kind == "" {
		kind = "headless-shell"
		if binaries[kind] == "" {
			kind = "chromium"
		}
	}
	browsertest.Need(t, binaries[kind], kind)
	return browsertest.Shared(t, binaries[kind])
}

func tctx(t *testing.T) context.Context { return sessiontest.Context(t) }

// session is a dtb session attached to the browser of kind.
func testSession(t *testing.T, kind string) *session.Session {
	return sessiontest.Session(t, browser(t, kind).Endpoint)
}

func fixture(path string) string { return fixtureBase + "/" + strings.TrimPrefix(path, "/") }

func openTab(t *testing.T, s *session.Session, url string) *cdp.Page {
	return sessiontest.OpenTab(t, s, url)
}
