// Package browsertest is the harness shared by dtb's browser tests: it finds
// the installed Chromium builds and applies the CI rule (a missing Chromium
// skips a test, but fails it under CI=true), launches and stops test browsers
// by PID, and builds and runs the real dtb binary with isolated state.
//
// It is a normal package so that test files of several packages can share it,
// but only _test.go files may import it: no production code depends on it. It
// does not import internal/cdp or internal/session (whose own tests use it), and it is Unix-only, as
// the browser tests are (process groups, signals by PID).
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"github.com/dtb-cli/dtb/internal/browser/chromeflags"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binaries are the Chromium builds installed on this machine.
type Binaries struct {
	Chrome        string // $DTB_CHROME resolved on the PATH, when set (the user's own choice)
	HeadlessShell string // chromium-headless-shell
	Chromium      string // the full browser: chromium, chromium-browser or google-chrome
}

// Find looks the browsers up on the PATH.
func Find() Binaries {
	var b Binaries
	if env := os.Getenv("DTB_CHROME"); env != "" {
		b.Chrome, _ = exec.LookPath(env)
	}
	b.HeadlessShell, _ = exec.LookPath("chromium-headless-shell")
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			b.Chromium = p
			break
		}
	}
	return b
}

// Preferred is the headless shell, else the full browser: what dtb launches
// for headless use. "" when neither is installed.
func (b Binaries) Preferred() string {
	if b.HeadlessShell != "" {
		return b.HeadlessShell
	}
	return b.Chromium
}

// Full is the full browser, else the headless shell. The full browser isolates
// sites, so cross-site frames are out of process (the shell keeps them in).
func (b Binaries) Full() string {
	if b.Chromium != "" {
		return b.Chromium
	}
	return b.HeadlessShell
}

// CI reports whether CI=true: there, browser tests must run.
func CI() bool { return os.Getenv("CI") == "true" }

// Need is the CI rule in a test: without bin (""), the test is skipped, or
// fails under CI=true. what names the missing browser.
func Need(t testing.TB, bin, what string) {
	t.Helper()
	if bin != "" {
		return
	}
	if CI() {
		t.Fatalf("CI=true and no %s on the PATH: browser tests must run", what)
	}
	t.Skipf("no %s installed", what)
}

// MainFail is the CI rule in a TestMain, which has no test to skip: without
// bin ("") under CI=true it says so on stderr and returns true, and TestMain
// exits 1. Otherwise the tests run (and those needing bin skip, see Need).
func MainFail(bin string) bool {
	if bin != "" || !CI() {
		return false
	}
	fmt.Fprintln(os.Stderr, "FAIL: CI=true and no chromium-headless-shell or chromium on the PATH")
	return true
}

// Flags are those of every test browser: dtb's own, headless.
var Flags = append([]string{"--headless"}, chromeflags.Base...)

// Browser is a running test browser.
type Browser struct {
	Binary     string
	Endpoint   string // http://127.0.0.1:PORT
	WebSocket  string // ws://127.0.0.1:PORT/devtools/browser/ID
	PID        int    // leads its own process group
	ProfileDir string // fresh, removed by Stop
	exited     chan struct{}
}

// Launch starts bin headless with Flags and a fresh profile, and returns once
// its DevTools endpoint (from DevToolsActivePort) answers.
func Launch(ctx context.Context, bin string) (*Browser, error) {
	profile, err := os.MkdirTemp("", "dtb-testbrowser-")
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), Flags...), "--user-data-dir="+profile, "about:blank")
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // its own group: Stop ends its helpers too
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	b := &Browser{Binary: bin, PID: cmd.Process.Pid, ProfileDir: profile, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(b.exited) }()
	if err := b.await(ctx); err != nil {
		b.Stop()
		return nil, fmt.Errorf("launching %s: %w", bin, err)
	}
	return b, nil
}

// await waits for DevToolsActivePort, then for the endpoint to answer.
func (b *Browser) await(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-b.exited:
			return errors.New("the browser exited at start")
		case <-ctx.Done():
			return fmt.Errorf("no DevTools endpoint: %w", ctx.Err())
		case <-tick.C:
		}
		if b.Endpoint == "" {
			raw, err := os.ReadFile(filepath.Join(b.ProfileDir, "DevToolsActivePort"))
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if err != nil || len(lines) < 2 {
				continue
			}
			port, err := strconv.Atoi(strings.TrimSpace(lines[0]))
			if err != nil || port <= 0 {
				continue
			}
			b.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
			b.WebSocket = fmt.Sprintf("ws://127.0.0.1:%d%s", port, strings.TrimSpace(lines[1]))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.Endpoint+"/json/version", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
}

// Stop kills the browser's process group by its PID, waits for it to exit and
// removes its profile.
func (b *Browser) Stop() {
	Kill(b.PID)
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
	}
	os.RemoveAll(b.ProfileDir)
}

// Kill sends SIGKILL to the process group that pid leads and to pid, and waits
// (5 s at most) until pid is gone. For browsers dtb launched, which lead their
// own group; a pid <= 0 is ignored.
func Kill(pid int) {
	if pid <= 0 {
		return
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); Alive(pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// GroupOf is pid's process group, 0 when it cannot be read.
func GroupOf(pid int) int {
	g, err := syscall.Getpgid(pid)
	if err != nil {
		return 0
	}
	return g
}

// GroupMembers lists the live (not zombie) processes of process group group.
func GroupMembers(group int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == group && Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Alive reports whether pid runs (a zombie counts as gone).
func Alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return !(i >= 0 && i+2 < len(s) && s[i+2] == 'Z')
}

// The test binary's shared browsers, one per binary, and the dtb it built.
var shared struct {
	mu       sync.Mutex
	browsers map[string]*Browser
	failed   map[string]error
}

// Shared is the test binary's browser of bin, launched on first use (the test
// fails when it cannot start) and stopped by Release. It applies Need first.
func Shared(t testing.TB, bin string) *Browser {
	t.Helper()
	Need(t, bin, "Chromium")
	b, err := shared1(bin)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shared1 is the browser of bin of Shared and Preferred: launched once, the
// error of a failed launch kept for every later caller.
func shared1(bin string) (*Browser, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if b := shared.browsers[bin]; b != nil {
		return b, nil
	}
	if err := shared.failed[bin]; err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Launch(ctx, bin)
	if err != nil {
		if shared.failed == nil {
			shared.failed = map[string]error{}
		}
		shared.failed[bin] = err
		return nil, err
	}
	if shared.browsers == nil {
		shared.browsers = map[string]*Browser{}
	}
	shared.browsers[bin] = b
	return b, nil
}

// Release stops the browsers of Shared and removes the dtb of Build. TestMain
// calls it once the tests have run.
func Release() {
	shared.mu.Lock()
	for bin, b := range shared.browsers {
		b.Stop()
		delete(shared.browsers, bin)
	}
	shared.mu.Unlock()
	removeBuild()
}

// Releasing wraps a TestMain's m: its Run runs the tests, then Release. For
// testscript.Main, which exits by itself.
func Releasing(m interface{ Run() int }) interface{ Run() int } { return releasing{m} }

type releasing struct{ m interface{ Run() int } }

func (r releasing) Run() int {
	defer Release()
	return r.m.Run()
}

// Isolate points this process's DTB_STATE_DIR and DTB_CACHE_DIR at a fresh
// temporary directory (state/ and cache/ in it), out of reach of the
// developer's dtb. TestMain calls remove at the end.
func Isolate() (remove func(), err error) {
	dir, err := os.MkdirTemp("", "dtb-test-")
	if err != nil {
		return nil, err
	}
	os.Setenv("DTB_STATE_DIR", filepath.Join(dir, "state"))
	os.Setenv("DTB_CACHE_DIR", filepath.Join(dir, "cache"))
	return func() { os.RemoveAll(dir) }, nil
}
