package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestBrowserCLI runs the real dtb binary (built once here) against one
// headless Chromium it launches with `dtb browser launch`, and fixture pages
// served from testdata/pages on 127.0.0.1. It asserts stdout JSON, the stderr
// reason and the exit code of each command.
func TestBrowserCLI(t *testing.T) {
	if _, err := exec.LookPath("chromium-headless-shell"); err != nil {
		if _, err2 := exec.LookPath("chromium"); err2 != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true and no Chromium on the PATH")
			}
			t.Skip("no Chromium installed")
		}
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dtb")
	build := exec.Command("go", "build", "-o", bin, "../cmd/dtb")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "pages"))))
	defer srv.Close()
	e := &cliEnv{t: t, bin: bin, state: filepath.Join(tmp, "state"), cache: filepath.Join(tmp, "cache")}

	t.Run("status without a browser", func(t *testing.T) {
		r := e.run(t, "status")
		r.exit(t, 0)
		var st struct {
			Connected   bool
			Diagnostics struct {
				Tried         []any
				BrowserBinary string
			}
		}
		r.decode(t, &st)
		if st.Connected || len(st.Diagnostics.Tried) == 0 || st.Diagnostics.BrowserBinary == "" {
			t.Fatalf("diagnostics: %s", r.stdout)
		}
	})
	t.Run("no-launch", func(t *testing.T) {
		e.run(t, "eval", "1", "--no-launch").fails(t, 5, "no-browser")
	})
	t.Run("cdp at nothing", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		e.run(t, "eval", "1", "--cdp", port, "--session", "nowhere").fails(t, 5, "no-browser")
		r := e.run(t, "status", "--cdp", "http://127.0.0.1:"+port, "--session", "nowhere")
		r.exit(t, 0)
		if !strings.Contains(r.stdout, `"connected":false`) {
			t.Fatalf("status: %s", r.stdout)
		}
	})

	var launched struct {
		Endpoint, Binary, ProfileDir string
		PID                          int
		Headless                     bool
	}
	r := e.run(t, "browser", "launch")
	r.exit(t, 0)
	r.decode(t, &launched)
	t.Cleanup(func() { syscall.Kill(-launched.PID, syscall.SIGKILL) })
	if launched.PID == 0 || !launched.Headless || launched.Endpoint == "" {
		t.Fatalf("launch: %s", r.stdout)
	}
	if filepath.Base(launched.Binary) != "chromium-headless-shell" && os.Getenv("CI") == "true" {
		t.Errorf("headless use should prefer chromium-headless-shell, got %s", launched.Binary)
	}
	if r := e.run(t, "browser", "launch"); !strings.Contains(r.stdout, `"reused":true`) {
		t.Fatalf("second launch: %s", r.stdout)
	}

	t.Run("open", func(t *testing.T) {
		var o struct {
			Tab    struct{ ID, Alias string }
			URL    string
			Title  string
			Status int
			NewTab bool
		}
		r := e.run(t, "open", srv.URL+"/index.html")
		r.exit(t, 0)
		r.decode(t, &o)
		if o.Status != 200 || o.Title != "dtb fixture: index" || !o.NewTab || o.Tab.Alias == "" {
			t.Fatalf("open: %s", r.stdout)
		}
		r = e.run(t, "open", srv.URL+"/nope.html", "--current")
		r.exit(t, 0)
		r.decode(t, &o)
		if o.Status != 404 || o.NewTab {
			t.Fatalf("404 is reported, not failed: %s", r.stdout)
		}
		r = e.run(t, "open", "http://dtb-cli-test.invalid/")
		r.fails(t, 1, "navigation-failed")
		if !strings.Contains(r.stderr, "net::ERR_") {
			t.Fatalf("no net error: %s", r.stderr)
		}
	})
	t.Run("eval", func(t *testing.T) {
		e.run(t, "open", srv.URL+"/throws.html").exit(t, 0)
		r := e.run(t, "eval", "document.title")
		r.exit(t, 0)
		if strings.TrimSpace(r.stdout) != `"dtb fixture: throws"` {
			t.Fatalf("eval: %q", r.stdout)
		}
		r = e.run(t, "eval", "boom()")
		r.fails(t, 1, "threw")
		var doc map[string]any
		json.Unmarshal([]byte(r.stderr), &doc)
		if doc["error"] != "Error: fixture boom" || doc["line"] == nil || doc["column"] == nil {
			t.Fatalf("threw document: %s", r.stderr)
		}
		r = e.runIn(t, "21*2", "eval", "-")
		r.exit(t, 0)
		if strings.TrimSpace(r.stdout) != "42" {
			t.Fatalf("stdin eval: %q", r.stdout)
		}
		f := filepath.Join(t.TempDir(), "x.js")
		os.WriteFile(f, []byte("Promise.resolve({ok: true})"), 0o600)
		r = e.run(t, "eval", "--file", f, "-r", "--jq", ".ok")
		r.exit(t, 0)
		if strings.TrimSpace(r.stdout) != "true" {
			t.Fatalf("file eval: %q", r.stdout)
		}
	})
	t.Run("screenshot", func(t *testing.T) {
		e.run(t, "open", srv.URL+"/tall.html").exit(t, 0)
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
			r := e.run(t, append([]string{"screenshot"}, c.args...)...)
			r.exit(t, 0)
			var s struct {
				Path          string
				Format        string
				Width, Height int
				Bytes         int
			}
			r.decode(t, &s)
			f, err := os.Open(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(f)
			info, _ := f.Stat()
			f.Close()
			if err != nil || format != c.format || cfg.Width != s.Width || cfg.Height != s.Height || int(info.Size()) != s.Bytes {
				t.Fatalf("%v: file %s is %s %dx%d (%v), printed %s", c.args, s.Path, format, cfg.Width, cfg.Height, err, r.stdout)
			}
			if c.w != 0 && (cfg.Width != c.w || cfg.Height != c.h) {
				t.Fatalf("%v: %dx%d, want %dx%d", c.args, cfg.Width, cfg.Height, c.w, c.h)
			}
			if info.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v", info.Mode())
			}
			if c.args == nil && !strings.HasPrefix(s.Path, filepath.Join(e.cache, "screenshots")) {
				t.Fatalf("default path %s not under DTB_CACHE_DIR", s.Path)
			}
		}
		e.run(t, "screenshot", "--format", "gif").fails(t, 2, "usage")
	})
	t.Run("close refuses tabs dtb did not open", func(t *testing.T) {
		resp, err := http.DefaultClient.Do(mustReq(t, http.MethodPut, launched.Endpoint+"/json/new?about:blank"))
		if err != nil {
			t.Fatal(err)
		}
		var foreign struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&foreign)
		resp.Body.Close()
		e.run(t, "close", "--tab", foreign.ID).fails(t, 6, "not-owned")
		e.run(t, "open", srv.URL+"/index.html", "--tab", foreign.ID).fails(t, 6, "not-owned")
		r := e.run(t, "status", "-r", "--jq", fmt.Sprintf(`.tabs[] | select(.id == %q) | .owned`, foreign.ID))
		if strings.TrimSpace(r.stdout) != "false" {
			t.Fatalf("the foreign tab is gone or owned: %q", r.stdout)
		}
		// dtb's own tab closes.
		r = e.run(t, "open", srv.URL+"/index.html", "-r", "--jq", ".tab.alias")
		alias := strings.TrimSpace(r.stdout)
		e.run(t, "close", "--tab", alias).exit(t, 0)
		e.run(t, "eval", "1", "--tab", alias).fails(t, 3, "no-such-tab")
	})
	t.Run("ten commands at once", func(t *testing.T) {
		before := e.ownedTabs(t)
		var wg sync.WaitGroup
		results := make([]cliResult, 10)
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.run(t, "open", srv.URL+"/index.html?n="+fmt.Sprint(i))
			}()
		}
		wg.Wait()
		aliases := map[string]bool{}
		for _, r := range results {
			r.exit(t, 0)
			var o struct{ Tab struct{ Alias string } }
			r.decode(t, &o)
			aliases[o.Tab.Alias] = true
		}
		if len(aliases) != 10 {
			t.Fatalf("aliases not unique: %v", aliases)
		}
		after := e.ownedTabs(t)
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
		r := e.run(t, "eval", "1+1", "--cdp", launched.Endpoint, "--session", "attached")
		r.exit(t, 0)
		r = e.run(t, "browser", "stop", "--session", "attached")
		r.exit(t, 0)
		if !strings.Contains(r.stdout, `"detached":true`) || !processAlive(launched.PID) {
			t.Fatalf("stop ended an attached browser: %s", r.stdout)
		}
	})
	t.Run("browser killed mid-session", func(t *testing.T) {
		syscall.Kill(-launched.PID, syscall.SIGKILL)
		for i := 0; i < 200 && processAlive(launched.PID); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		r := e.run(t, "eval", "1+1")
		r.exit(t, 0)
		if !strings.Contains(r.stderr, "browser-gone") {
			t.Fatalf("no browser-gone warning: %q", r.stderr)
		}
		var st struct{ Browser struct{ PID int } }
		e.run(t, "status").decode(t, &st)
		if st.Browser.PID == 0 || st.Browser.PID == launched.PID {
			t.Fatalf("browser not replaced: %+v", st)
		}
		t.Cleanup(func() { syscall.Kill(-st.Browser.PID, syscall.SIGKILL) })
		r = e.run(t, "browser", "stop")
		r.exit(t, 0)
		if !strings.Contains(r.stdout, `"stopped":true`) || processAlive(st.Browser.PID) {
			t.Fatalf("stop: %s", r.stdout)
		}
		if _, err := os.Stat(launched.ProfileDir); err == nil {
			t.Errorf("temporary profile %s of the killed browser left behind", launched.ProfileDir)
		}
	})
}

type cliEnv struct {
	t                 *testing.T
	bin, state, cache string
}

type cliResult struct {
	args           []string
	stdout, stderr string
	code           int
}

func (e *cliEnv) run(t *testing.T, args ...string) cliResult { return e.runIn(t, "", args...) }

func (e *cliEnv) runIn(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(cleanEnv(), "DTB_STATE_DIR="+e.state, "DTB_CACHE_DIR="+e.cache, "DTB_TIMEOUT=60s")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{args: args, stdout: out.String(), stderr: errb.String(), code: code}
}

// cleanEnv is the environment without DTB_* settings of the developer's shell.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DTB_") {
			env = append(env, kv)
		}
	}
	return env
}

func (r cliResult) exit(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("dtb %v: exit %d, want %d\nstdout: %s\nstderr: %s", r.args, r.code, code, r.stdout, r.stderr)
	}
}

func (r cliResult) fails(t *testing.T, code int, reason string) {
	t.Helper()
	r.exit(t, code)
	if r.stdout != "" {
		t.Fatalf("dtb %v: stdout on failure: %s", r.args, r.stdout)
	}
	var doc struct {
		OK     *bool
		Reason string
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(lastLine(r.stderr))), &doc); err != nil || doc.Reason != reason || doc.OK == nil || *doc.OK {
		t.Fatalf("dtb %v: stderr %q, want reason %s", r.args, r.stderr, reason)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (r cliResult) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("dtb %v: stdout is not JSON: %v\n%s", r.args, err, r.stdout)
	}
}

// ownedTabs reads the session file: the aliases of its owned tabs.
func (e *cliEnv) ownedTabs(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.state, "sessions", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Tabs map[string]struct{ Alias string }
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("session file is not JSON: %v", err)
	}
	out := map[string]bool{}
	for _, tab := range st.Tabs {
		out[tab.Alias] = true
	}
	return out
}

func mustReq(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return !(i >= 0 && i+2 < len(b) && b[i+2] == 'Z')
}
