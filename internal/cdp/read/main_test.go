package read

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// One browser per binary and test binary: the headless shell (shared by most
// tests) and, for the out-of-process frame tests, full Chromium, launched on
// first use. Fixtures come from testdata/ on 127.0.0.1 (also reachable as
// localhost:<port>, another origin and site).
var (
	fixtureBase string // http://127.0.0.1:PORT
	fixturePort int
	binaries    = map[string]string{} // "headless-shell", "chromium" → path
	browsersMu  sync.Mutex
	browsers    = map[string]*cdp.BrowserInfo{}
	skipWhy     string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	if p, err := exec.LookPath("chromium-headless-shell"); err == nil {
		binaries["headless-shell"] = p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			binaries["chromium"] = p
			break
		}
	}
	if len(binaries) == 0 {
		skipWhy = "no Chromium installed"
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "FAIL: CI=true and no chromium-headless-shell or chromium on the PATH")
			return 1
		}
	}
	// Keep the developer's dtb state and cache out of reach.
	tmp, err := os.MkdirTemp("", "dtb-readtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	os.Setenv("DTB_STATE_DIR", filepath.Join(tmp, "state"))
	os.Setenv("DTB_CACHE_DIR", filepath.Join(tmp, "cache"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fixturePort = ln.Addr().(*net.TCPAddr).Port
	fixtureBase = fmt.Sprintf("http://127.0.0.1:%d", fixturePort)
	srv := &http.Server{Handler: fixtureHandler()}
	go srv.Serve(ln)
	defer srv.Close()
	defer stopBrowsers()
	return m.Run()
}

func fixtureHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("..", "..", "..", "testdata"))))
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

func stopBrowsers() {
	browsersMu.Lock()
	defer browsersMu.Unlock()
	for _, b := range browsers {
		syscall.Kill(-b.PID, syscall.SIGKILL)
		for i := 0; i < 500 && syscall.Kill(b.PID, 0) == nil; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if b.TempProfile {
			os.RemoveAll(b.ProfileDir)
		}
	}
}

// browser returns the running browser of kind ("headless-shell" or
// "chromium"; "" for the preferred one), launching it on first use.
func browser(t *testing.T, kind string) *cdp.BrowserInfo {
	t.Helper()
	if kind == "" {
		kind = "headless-shell"
		if binaries[kind] == "" {
			kind = "chromium"
		}
	}
	bin := binaries[kind]
	if bin == "" {
		if len(binaries) == 0 {
			t.Skip(skipWhy)
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s on the PATH", kind)
		}
		t.Skipf("no %s installed", kind)
	}
	browsersMu.Lock()
	defer browsersMu.Unlock()
	if b := browsers[kind]; b != nil {
		return b
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := cdp.Launch(ctx, cdp.LaunchOptions{Binary: bin, Session: "readtest"})
	if err != nil {
		t.Fatalf("launching %s: %v", bin, err)
	}
	browsers[kind] = b
	return b
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// session is a dtb session with its own state directory, attached to the
// browser of kind; the tabs it opens are closed at the end of the test.
func session(t *testing.T, kind string) *cdp.Session {
	t.Helper()
	b := browser(t, kind)
	s, err := cdp.Open(context.Background(), cdp.Config{StateDir: t.TempDir(), CDP: b.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for id := range s.State().Tabs {
			s.CloseTab(ctx, id)
		}
		s.Close()
	})
	return s
}

func fixture(path string) string { return fixtureBase + "/" + strings.TrimPrefix(path, "/") }

// openTab opens url in a new tab of s (dtb open: waits for load) and connects
// to it.
func openTab(t *testing.T, s *cdp.Session, url string) *cdp.Page {
	t.Helper()
	ctx := tctx(t)
	res, err := s.OpenURL(ctx, cdp.OpenOptions{URL: url, Wait: cdp.WaitLoad})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	p, err := s.Page(ctx, cdp.TabSelector{Tab: res.Tab.ID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
