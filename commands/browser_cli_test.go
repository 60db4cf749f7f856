package commands

import (
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestBrowserCLI runs the real dtb binary (built once per test binary) against one
// headless Chromium it launches with `dtb browser launch`, and fixture pages
// served from testdata/pages on 127.0.0.1. It asserts stdout JSON, the stderr
// reason and the exit code of each command.
func TestBrowserCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "pages"))))
	defer srv.Close()

	t.Run("status without a browser", func(t *testing.T) {
		r := e.Run(t, "status")
		r.Exit(t, 0)
		var st struct {
			Connected   bool
			Diagnostics struct {
				Tried         []any
				BrowserBinary string
			}
		}
		r.Decode(t, &st)
		if st.Connected || len(st.Diagnostics.Tried) == 0 || st.Diagnostics.BrowserBinary == "" {
			t.Fatalf("diagnostics: %s", r.Stdout)
		}
	})
	t.Run("no-launch", func(t *testing.T) {
		e.Run(t, "eval", "1", "--no-launch").Fails(t, 5, "no-browser")
	})
	t.Run("cdp at nothing", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		e.Run(t, "eval", "1", "--cdp", port, "--session", "nowhere").Fails(t, 5, "no-browser")
		r := e.Run(t, "status", "--cdp", "http://127.0.0.1:"+port, "--session", "nowhere")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, `"connected":false`) {
			t.Fatalf("status: %s", r.Stdout)
		}
	})

	var launched struct {
		Endpoint, Binary, ProfileDir string
		PID                          int
		Headless                     bool
	}
	r := e.Run(t, "browser", "launch")
	r.Exit(t, 0)
	r.Decode(t, &launched)
	t.Cleanup(func() { browsertest.Kill(launched.PID) })
	if launched.PID == 0 || !launched.Headless || launched.Endpoint == "" {
		t.Fatalf("launch: %s", r.Stdout)
	}
	if filepath.Base(launched.Binary) != "chromium-headless-shell" && os.Getenv("CI") == "true" {
		t.Errorf("headless use should prefer chromium-headless-shell, got %s", launched.Binary)
	}
	if r := e.Run(t, "browser", "launch"); !strings.Contains(r.Stdout, `"reused":true`) {
		t.Fatalf("second launch: %s", r.Stdout)
	}

	t.Run("open", func(t *testing.T) {
		var o struct {
			Tab    struct{ ID, Alias string }
			URL    string
			Title  string
			Status int
			NewTab bool
		}
		r := e.Run(t, "open", srv.URL+"/index.html")
		r.Exit(t, 0)
		r.Decode(t, &o)
		if o.Status != 200 || o.Title != "dtb fixture: index" || !o.NewTab || o.Tab.Alias == "" {
			t.Fatalf("open: %s", r.Stdout)
		}
		r = e.Run(t, "open", srv.URL+"/nope.html", "--current")
		r.Exit(t, 0)
		r.Decode(t, &o)
		if o.Status != 404 || o.NewTab {
			t.Fatalf("404 is reported, not failed: %s", r.Stdout)
		}
		r = e.Run(t, "open", "http://dtb-cli-test.invalid/")
		r.Fails(t, 1, "navigation-failed")
		if !strings.Contains(r.Stderr, "net::ERR_") {
			t.Fatalf("no net error: %s", r.Stderr)
		}
	})
	t.Run("eval", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/throws.html").Exit(t, 0)
		r := e.Run(t, "eval", "document.title")
		r.Exit(t, 0)
		if strings.TrimSpace(r.Stdout) != `"dtb fixture: throws"` {
			t.Fatalf("eval: %q", r.Stdout)
		}
		r = e.Run(t, "eval", "boom()")
		r.Fails(t, 1, "threw")
		var doc map[string]any
		json.Unmarshal([]byte(r.Stderr), &doc)
		if doc["error"] != "Error: fixture boom" || doc["line"] == nil || doc["column"] == nil {
			t.Fatalf("threw document: %s", r.Stderr)
		}
		r = e.RunWith(t, nil, "21*2", "eval", "-")
		r.Exit(t, 0)
		if strings.TrimSpace(r.Stdout) != "42" {
			t.Fatalf("stdin eval: %q", r.Stdout)
		}
		f := filepath.Join(t.TempDir(), "x.js")
		os.WriteFile(f, []byte("Promise.resolve({ok: true})"), 0o600)
		r = e.Run(t, "eval", "--file", f, "-r", "--jq", ".ok")
		r.Exit(t, 0)
		if strings.TrimSpace(r.Stdout) != "true" {
			t.Fatalf("file eval: %q", r.Stdout)
		}
	})
	t.Run("output ceiling", func(t *testing.T) {
		// Over the default 16 MiB: refused with the size, nothing printed.
		r := e.Run(t, "eval", "'x'.repeat(17 * 1024 * 1024)")
		r.Fails(t, 1, "result-too-large")
		if r.Stdout != "" || !strings.Contains(r.Stderr, `"maxBytes":16777216`) || !strings.Contains(r.Stderr, `"bytes":17825`) {
			t.Fatalf("stdout %d bytes, stderr %s", len(r.Stdout), r.Stderr)
		}
		r = e.Run(t, "eval", "({list: Array.from({length: 1000}, (_, i) => 'item ' + i)})", "--max-bytes", "4KiB")
		r.Fails(t, 1, "result-too-large")
		r = e.RunWith(t, []string{"DTB_MAX_BYTES=32MiB"}, "", "eval", "'x'.repeat(17 * 1024 * 1024)", "-r", "--jq", "length")
		r.Exit(t, 0)
		if strings.TrimSpace(r.Stdout) != "17825792" {
			t.Fatalf("DTB_MAX_BYTES=32MiB: %q", r.Stdout)
		}
		e.Run(t, "eval", "1", "--max-bytes", "lots").Fails(t, 2, "usage")
		e.Run(t, "status", "--max-bytes", "10").Fails(t, 1, "result-too-large")
	})
	t.Run("screenshot", func(t *testing.T) {
		// A viewport narrower than the page's 1000 px: the full page is the page.
		e.Run(t, "open", srv.URL+"/tall.html", "--viewport", "800x600").Exit(t, 0)
		for _, c := range []struct {
			args   []string
			format string
			w, h   int
		}{
			{nil, "jpeg", 0, 0},
			{[]string{"--full", "--format", "png"}, "png", 1000, 3000},
			{[]string{"--full", "--max-side", "600"}, "jpeg", 200, 600},
			{[]string{"--clip", "0,0,300,100", "--out", filepath.Join(t.TempDir(), "c.png"), "--format", "png"}, "png", 300, 100},
		} {
			r := e.Run(t, append([]string{"screenshot"}, c.args...)...)
			r.Exit(t, 0)
			var s struct {
				Path          string
				Format        string
				Width, Height int
				Bytes         int
			}
			r.Decode(t, &s)
			f, err := os.Open(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(f)
			info, _ := f.Stat()
			f.Close()
			if err != nil || format != c.format || cfg.Width != s.Width || cfg.Height != s.Height || int(info.Size()) != s.Bytes {
				t.Fatalf("%v: file %s is %s %dx%d (%v), printed %s", c.args, s.Path, format, cfg.Width, cfg.Height, err, r.Stdout)
			}
			if c.w != 0 && (cfg.Width != c.w || cfg.Height != c.h) {
				t.Fatalf("%v: %dx%d, want %dx%d", c.args, cfg.Width, cfg.Height, c.w, c.h)
			}
			if info.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v", info.Mode())
			}
			if c.args == nil && !strings.HasPrefix(s.Path, filepath.Join(e.Cache, "screenshots")) {
				t.Fatalf("default path %s not under DTB_CACHE_DIR", s.Path)
			}
		}
		e.Run(t, "screenshot", "--format", "gif").Fails(t, 2, "usage")
	})
	t.Run("close refuses tabs dtb did not open", func(t *testing.T) {
		resp, err := http.DefaultClient.Do(mustReq(t, http.MethodPut, launched.Endpoint+"/json/new?about:blank"))
		if err != nil {
			t.Fatal(err)
		}
		var foreign struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&foreign)
		resp.Body.Close()
		e.Run(t, "close", "--tab", foreign.ID).Fails(t, 6, "not-owned")
		e.Run(t, "open", srv.URL+"/index.html", "--tab", foreign.ID).Fails(t, 6, "not-owned")
		r := e.Run(t, "status", "-r", "--jq", fmt.Sprintf(`.tabs[] | select(.id == %q) | .owned`, foreign.ID))
		if strings.TrimSpace(r.Stdout) != "false" {
			t.Fatalf("the foreign tab is gone or owned: %q", r.Stdout)
		}
		// dtb's own tab closes.
		r = e.Run(t, "open", srv.URL+"/index.html", "-r", "--jq", ".tab.alias")
		alias := strings.TrimSpace(r.Stdout)
		e.Run(t, "close", "--tab", alias).Exit(t, 0)
		e.Run(t, "eval", "1", "--tab", alias).Fails(t, 3, "no-such-tab")
	})
	t.Run("ten commands at once", func(t *testing.T) {
		before := ownedTabs(t, e)
		var wg sync.WaitGroup
		results := make([]browsertest.Result, 10)
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.Run(t, "open", srv.URL+"/index.html?n="+fmt.Sprint(i))
			}()
		}
		wg.Wait()
		aliases := map[string]bool{}
		for _, r := range results {
			r.Exit(t, 0)
			var o struct{ Tab struct{ Alias string } }
			r.Decode(t, &o)
			aliases[o.Tab.Alias] = true
		}
		if len(aliases) != 10 {
			t.Fatalf("aliases not unique: %v", aliases)
		}
		after := ownedTabs(t, e)
		if len(after) != len(before)+10 {
			t.Fatalf("owned tabs %d → %d, want +10", len(before), len(after))
		}
		for a := range aliases {
			if !after[a] {
				t.Fatalf("alias %s missing from the session file", a)
			}
		}
	})
	t.Run("attach to a running browser", func(t *testing.T) {
		r := e.Run(t, "eval", "1+1", "--cdp", launched.Endpoint, "--session", "attached")
		r.Exit(t, 0)
		r = e.Run(t, "browser", "stop", "--session", "attached")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, `"detached":true`) || !browsertest.Alive(launched.PID) {
			t.Fatalf("stop ended an attached browser: %s", r.Stdout)
		}
	})
	t.Run("browser killed mid-session", func(t *testing.T) {
		// Only the browser process dies (it does not lead its group under
		// the Debian wrapper); its helpers outlive it for a while.
		group := browsertest.GroupOf(launched.PID)
		if group == 0 {
			t.Fatalf("cannot read the process group of the browser (pid %d)", launched.PID)
		}
		browsertest.Kill(launched.PID)
		r := e.Run(t, "eval", "1+1")
		r.Exit(t, 0)
		if !strings.Contains(r.Stderr, "browser-gone") {
			t.Fatalf("no browser-gone warning: %q", r.Stderr)
		}
		if left := browsertest.GroupMembers(group); len(left) > 0 {
			t.Errorf("processes %v of the killed browser's group %d still run after dtb replaced it", left, group)
		}
		var st struct{ Browser struct{ PID int } }
		e.Run(t, "status").Decode(t, &st)
		if st.Browser.PID == 0 || st.Browser.PID == launched.PID {
			t.Fatalf("browser not replaced: %+v", st)
		}
		t.Cleanup(func() { browsertest.Kill(st.Browser.PID) })
		r = e.Run(t, "browser", "stop")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, `"stopped":true`) || browsertest.Alive(st.Browser.PID) {
			t.Fatalf("stop: %s", r.Stdout)
		}
		if _, err := os.Stat(launched.ProfileDir); err == nil {
			var left []string
			filepath.WalkDir(launched.ProfileDir, func(path string, _ os.DirEntry, _ error) error {
				left = append(left, path)
				return nil
			})
			t.Errorf("temporary profile %s of the killed browser left behind: %q", launched.ProfileDir, left)
		}
	})
}

// newCLI runs the dtb built for this test binary with the test's own state and
// cache.
func newCLI(t *testing.T) *browsertest.CLI {
	e := browsertest.NewCLI(browsertest.MustBuild(t), t.TempDir(), "DTB_TIMEOUT=60s")
	t.Cleanup(func() { browsertest.StopHosts(e.State) })
	return e
}

// sessionFile is what the CLI tests read of the default session's file.
type sessionFile struct {
	Browser struct{ PID int }
	Tabs    map[string]struct{ Alias string }
}

func readSession(e *browsertest.CLI) (sessionFile, error) {
	return readSessionNamed(e, "default")
}

// readSessionNamed is readSession of the named session.
func readSessionNamed(e *browsertest.CLI, name string) (sessionFile, error) {
	var st sessionFile
	b, err := os.ReadFile(filepath.Join(e.State, "sessions", name+".json"))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("session file is not JSON: %v", err)
	}
	return st, nil
}

// ownedTabs reads the session file: the aliases of its owned tabs.
func ownedTabs(t *testing.T, e *browsertest.CLI) map[string]bool {
	t.Helper()
	st, err := readSession(e)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tab := range st.Tabs {
		out[tab.Alias] = true
	}
	return out
}

// browserPID is the PID of the default session's browser from its session
// file; 0 without one.
func browserPID(e *browsertest.CLI) int {
	st, _ := readSession(e)
	return st.Browser.PID
}

func mustReq(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// stopBrowser ends the default session's browser of e (and its host), and
// kills its process should stop leave it.
func stopBrowser(t *testing.T, e *browsertest.CLI) {
	pid := browserPID(e)
	e.Run(t, "browser", "stop")
	browsertest.Kill(pid)
}

// stopBrowserAtEnd is stopBrowser when the test ends.
func stopBrowserAtEnd(t *testing.T, e *browsertest.CLI) {
	t.Cleanup(func() { stopBrowser(t, e) })
}
