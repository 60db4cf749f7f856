package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/proc"
)

func reason(err error) string {
	var e *output.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func openTab(t *testing.T, s *Session, path string) *OpenResult {
	t.Helper()
	res, err := s.OpenURL(tctx(t), OpenOptions{URL: fixture(path), Wait: cdp.WaitLoad})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestEvaluate(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("index.html"), cdp.WaitLoad)
	cases := []struct{ expr, want string }{
		{"1+2", "3"},
		{"window.fixture", `{"answer":42,"list":[1,2,3]}`},
		{"new Promise(r => setTimeout(() => r('late'), 20))", `"late"`},
		{"undefined", "null"},
		{"NaN", `"NaN"`},
		{"document.title", `"dtb fixture: index"`},
	}
	for _, c := range cases {
		got, err := p.Evaluate(ctx, c.expr, true)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if string(got) != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got, c.want)
		}
	}
	// Typed calls through cdproto work on a Page.
	res, err := cdproto.Call(ctx, p, runtime.Evaluate, runtime.EvaluateParams{Expression: "6*7", ReturnByValue: ptr(true)})
	if err != nil || string(res.Result.Value) != "42" {
		t.Fatalf("cdp.Call: %v %v", res, err)
	}
}

func TestEvaluateThrows(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("throws.html"), cdp.WaitLoad)
	_, err := p.Evaluate(ctx, "\n  boom()", true)
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "threw" || e.ExitCode() != 1 {
		t.Fatalf("err = %#v, want threw", err)
	}
	if e.Message != "Error: fixture boom" {
		t.Errorf("message %q", e.Message)
	}
	if e.Details["line"] == nil || e.Details["column"] == nil {
		t.Errorf("no location: %v", e.Details)
	}
	_, err = p.Evaluate(ctx, "Promise.reject(new TypeError('nope'))", true)
	if reason(err) != "threw" || !bytes.Contains([]byte(err.Error()), []byte("TypeError: nope")) {
		t.Fatalf("rejection: %v", err)
	}
}

func TestOpenStatusAndFailures(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	res, err := s.OpenURL(ctx, OpenOptions{URL: fixture("__status__/404"), Wait: cdp.WaitLoad})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == nil || *res.Status != 404 || res.Title != "status 404" {
		t.Fatalf("404 page: %+v", res)
	}
	_, err = s.OpenURL(ctx, OpenOptions{URL: "http://dtb-test.invalid/", Wait: cdp.WaitLoad})
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "navigation-failed" || e.Details["netError"] == nil {
		t.Fatalf("DNS failure: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()
	_, err = s.OpenURL(ctx, OpenOptions{URL: "http://" + dead + "/", Wait: cdp.WaitLoad})
	if reason(err) != "navigation-failed" {
		t.Fatalf("refused connection: %v", err)
	}
	// --wait none returns before load; the slow image would hold load for 20 s.
	start := time.Now()
	if _, err := s.OpenURL(ctx, OpenOptions{URL: fixture("slow.html"), Wait: cdp.WaitNone}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenURL(ctx, OpenOptions{URL: fixture("slow.html"), Wait: cdp.WaitDOMContentLoaded}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("--wait none/domcontentloaded waited for load")
	}
}

func TestAliasesStableAndNeverReused(t *testing.T) {
	s := attached(t)
	a := openTab(t, s, "index.html")
	b := openTab(t, s, "tall.html")
	if a.Tab.Alias == b.Tab.Alias || a.Tab.Alias == "" {
		t.Fatalf("aliases %q %q", a.Tab.Alias, b.Tab.Alias)
	}
	ctx := tctx(t)
	st, err := s.Status(ctx)
	if err != nil || !st.Connected {
		t.Fatalf("status: %v %+v", err, st)
	}
	seen := map[string]string{}
	for _, tab := range st.Tabs {
		seen[tab.ID] = tab.Alias
	}
	if seen[a.Tab.ID] != a.Tab.Alias || seen[b.Tab.ID] != b.Tab.Alias {
		t.Fatalf("status changed aliases: %v", seen)
	}
	if st.CurrentTab == nil || st.CurrentTab.ID != b.Tab.ID {
		t.Fatalf("current tab %+v, want %s", st.CurrentTab, b.Tab.ID)
	}
	// Select by alias and by prefix.
	for _, sel := range []string{a.Tab.Alias, a.Tab.ID[:10], a.Tab.ID} {
		p, err := s.Page(ctx, TabSelector{Tab: sel})
		if err != nil || p.ID != a.Tab.ID {
			t.Fatalf("--tab %s: %v", sel, err)
		}
		p.Close()
	}
	if _, err := s.CloseTab(ctx, a.Tab.Alias); err != nil {
		t.Fatal(err)
	}
	c := openTab(t, s, "index.html")
	if c.Tab.Alias == a.Tab.Alias || c.Tab.Alias == b.Tab.Alias {
		t.Fatalf("alias %s reused", c.Tab.Alias)
	}
	if _, err := s.Page(ctx, TabSelector{Tab: a.Tab.Alias}); reason(err) != "no-such-tab" {
		t.Fatalf("closed alias: %v", err)
	}
}

func TestOwnershipRefusals(t *testing.T) {
	s := attached(t)
	foreign := foreignTab(t)
	ctx := tctx(t)
	_, err := s.CloseTab(ctx, foreign)
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "not-owned" || e.ExitCode() != 6 {
		t.Fatalf("close foreign: %v", err)
	}
	if !pageExists(t, foreign) {
		t.Fatal("the foreign tab was closed")
	}
	if _, err := s.OpenURL(ctx, OpenOptions{URL: fixture("index.html"), Tab: foreign}); reason(err) != "not-owned" {
		t.Fatalf("navigate foreign: %v", err)
	}
	// Reading a foreign tab is allowed.
	p, err := s.Page(ctx, TabSelector{Tab: foreign})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Evaluate(ctx, "1", false); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if !pageExists(t, foreign) {
		t.Fatal("detaching closed the foreign tab")
	}
	// An owned tab whose bookkeeping expired is no longer dtb's.
	own := openTab(t, s, "index.html")
	s.Update(ctx, func(st *State) error {
		st.Tabs[own.Tab.ID].LastUse = time.Now().Add(-TabTTL - time.Minute)
		return nil
	})
	s.Update(ctx, func(*State) error { return nil }) // the next command sweeps
	if s.state.Tabs[own.Tab.ID] != nil {
		t.Fatal("expired entry not swept")
	}
	if _, err := s.CloseTab(ctx, own.Tab.ID); reason(err) != "not-owned" {
		t.Fatalf("close expired: %v", err)
	}
}

func TestWorkspacesAndIncognito(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	a, err := s.OpenURL(ctx, OpenOptions{URL: fixture("index.html"), Workspace: "research"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.OpenURL(ctx, OpenOptions{URL: fixture("tall.html"), Workspace: "research"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Workspace != "research" || b.Workspace != "research" || a.Incognito || b.TookOver {
		t.Fatalf("workspace tabs: %+v %+v", a, b)
	}
	ws := s.state.Workspaces["research"]
	if ws == nil || ws.ActiveTab != b.Tab.ID {
		t.Fatalf("workspace state %+v", ws)
	}
	// Page commands with --workspace use its active tab.
	p, err := s.Page(ctx, TabSelector{Workspace: "research"})
	if err != nil || p.ID != b.Tab.ID {
		t.Fatalf("workspace page: %v", err)
	}
	p.Close()
	// An explicit incognito value the window does not match: a new window takes over.
	inc := true
	c, err := s.OpenURL(ctx, OpenOptions{URL: fixture("index.html"), Workspace: "research", Incognito: &inc})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Incognito || !c.TookOver {
		t.Fatalf("takeover: %+v", c)
	}
	if w := s.state.Workspaces["research"]; !w.Incognito || w.BrowserContext == "" {
		t.Fatalf("incognito workspace %+v", w)
	}
	// A later open joins the incognito window.
	d, err := s.OpenURL(ctx, OpenOptions{URL: fixture("tall.html"), Workspace: "research"})
	if err != nil || !d.Incognito || d.TookOver {
		t.Fatalf("join incognito: %+v %v", d, err)
	}
	pages, _ := browser.ListPagesHTTP(ctx, shared.Endpoint, nil)
	ctxOf := map[string]string{}
	for _, pg := range pages {
		ctxOf[pg.ID] = pg.BrowserContextID
	}
	if ctxOf[d.Tab.ID] == "" || ctxOf[d.Tab.ID] != ctxOf[c.Tab.ID] {
		t.Logf("browser contexts: %v (discovery API may omit them)", ctxOf)
	}
	st, err := s.Status(ctx)
	if err != nil || len(st.Workspaces) != 1 || !st.Workspaces[0].Incognito {
		t.Fatalf("status workspaces %+v %v", st.Workspaces, err)
	}
	res, err := s.CloseWorkspace(ctx, "research")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Closed) != 2 || !res.WindowClosed {
		t.Fatalf("close workspace: %+v", res)
	}
	if pageExists(t, c.Tab.ID) || pageExists(t, d.Tab.ID) {
		t.Fatal("workspace tabs still open")
	}
	if !pageExists(t, a.Tab.ID) {
		t.Fatal("a tab of the old window (taken over) was closed")
	}
	if len(s.state.Contexts) != 0 {
		t.Fatalf("incognito context not disposed: %v", s.state.Contexts)
	}
}

func decode(t *testing.T, data []byte, format string) image.Image {
	t.Helper()
	var img image.Image
	var err error
	if format == "png" {
		img, err = png.Decode(bytes.NewReader(data))
	} else {
		img, err = jpeg.Decode(bytes.NewReader(data))
	}
	if err != nil {
		t.Fatalf("decode %s: %v", format, err)
	}
	return img
}

func TestScreenshot(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("tall.html"), cdp.WaitLoad)
	var vp struct{ W, H int }
	raw, _ := p.Evaluate(ctx, "({W: innerWidth, H: innerHeight})", false)
	json.Unmarshal(raw, &vp)
	cases := []struct {
		name string
		o    cdp.ScreenshotOptions
		w, h int
		scal bool
	}{
		{"viewport jpeg", cdp.ScreenshotOptions{}, vp.W, vp.H, false},
		{"full png", cdp.ScreenshotOptions{Full: true, Format: "png"}, 1000, 3000, false},
		{"full scaled", cdp.ScreenshotOptions{Full: true, MaxSide: 1500}, 500, 1500, true},
		{"clip", cdp.ScreenshotOptions{Clip: &cdp.Clip{X: 10, Y: 20, Width: 120, Height: 80}, Format: "png"}, 120, 80, false},
		{"clip beyond viewport", cdp.ScreenshotOptions{Clip: &cdp.Clip{X: 0, Y: 2000, Width: 200, Height: 100}}, 200, 100, false},
	}
	for _, c := range cases {
		shot, err := p.Screenshot(ctx, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		img := decode(t, shot.Data, shot.Format)
		b := img.Bounds()
		if b.Dx() != c.w || b.Dy() != c.h || shot.Width != c.w || shot.Height != c.h || shot.Scaled != c.scal {
			t.Errorf("%s: %dx%d (reported %dx%d scaled %v), want %dx%d scaled %v", c.name, b.Dx(), b.Dy(), shot.Width, shot.Height, shot.Scaled, c.w, c.h, c.scal)
		}
	}
	// The clip beyond the viewport shows the gradient's lower (bluer) part.
	shot, _ := p.Screenshot(ctx, cdp.ScreenshotOptions{Clip: &cdp.Clip{X: 0, Y: 2900, Width: 50, Height: 50}, Format: "png"})
	r, _, bl, _ := decode(t, shot.Data, "png").At(25, 25).RGBA()
	if bl <= r {
		t.Errorf("clip at y=2900 is not from the bottom of the page (r=%d b=%d)", r, bl)
	}
	// Files are 0600 under the cache dir.
	path, err := WriteScreenshot(shot, "", "test")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("screenshot file %s: %v %v", path, st.Mode(), err)
	}
	if _, err := p.Screenshot(ctx, cdp.ScreenshotOptions{Format: "gif"}); reason(err) != "usage" {
		t.Fatalf("bad format: %v", err)
	}
}

func TestConcurrentUpdates(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), Config{StateDir: dir, Session: "conc"})
			if err != nil {
				t.Error(err)
				return
			}
			err = s.Update(context.Background(), func(st *State) error {
				st.Own(fmt.Sprintf("%032X", i), "", "", time.Now())
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	s, _ := Open(context.Background(), Config{StateDir: dir, Session: "conc"})
	st := s.State()
	if len(st.Tabs) != 10 || len(st.Aliases) != 10 || st.AliasCounter != 10 {
		t.Fatalf("lost updates: %d tabs, %d aliases, counter %d", len(st.Tabs), len(st.Aliases), st.AliasCounter)
	}
	info, err := os.Stat(s.File())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("session file mode %v %v", info.Mode(), err)
	}
}

func TestCDPNowhere(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s, err := Open(context.Background(), Config{StateDir: t.TempDir(), CDP: fmt.Sprint(port)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Page(tctx(t), TabSelector{})
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "no-browser" || e.ExitCode() != 5 {
		t.Fatalf("err %v", err)
	}
	st, err := s.Status(tctx(t))
	if err != nil || st.Connected || st.Diagnostics == nil || len(st.Diagnostics.Tried) == 0 {
		t.Fatalf("status diagnostics: %+v %v", st, err)
	}
}

func TestResolveCDPForms(t *testing.T) {
	needBrowser(t)
	ctx := tctx(t)
	port := shared.Endpoint[len("http://127.0.0.1:"):]
	for _, raw := range []string{port, "127.0.0.1:" + port, "http://localhost:" + port, shared.WebSocket} {
		info, err := browser.ResolveCDP(ctx, raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if browser.PathOf(info.WebSocket) != browser.PathOf(shared.WebSocket) || info.Endpoint == "" || !info.Attached {
			t.Errorf("%s: %+v", raw, info)
		}
	}
	if _, err := browser.ResolveCDP(ctx, "ftp://x", nil); reason(err) != "usage" {
		t.Fatalf("bad scheme: %v", err)
	}
}

// TestBrowserWebsocketOnly covers endpoints without a discovery API (wss
// services): tabs are reached through flattened sessions on the browser socket.
func TestBrowserWebsocketOnly(t *testing.T) {
	needBrowser(t)
	s, err := Open(context.Background(), Config{StateDir: t.TempDir(), CDP: shared.WebSocket})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := tctx(t)
	if _, err := s.Browser(ctx); err != nil {
		t.Fatal(err)
	}
	s.Update(ctx, func(st *State) error { st.Browser.Endpoint = ""; return nil })
	res, err := s.OpenURL(ctx, OpenOptions{URL: fixture("index.html")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Page(ctx, TabSelector{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Evaluate(ctx, "document.title", false)
	p.Close()
	if err != nil || string(v) != `"dtb fixture: index"` {
		t.Fatalf("eval via flattened session: %s %v", v, err)
	}
	if _, err := s.CloseTab(ctx, res.Tab.ID); err != nil {
		t.Fatal(err)
	}
}

// TestLaunchAndReplace launches a session's own browser with each installed
// binary, kills it behind dtb's back, and checks that the next command detects
// and replaces it; stop removes the temporary profile.
func TestLaunchAndReplace(t *testing.T) {
	needBrowser(t)
	for name, bin := range map[string]string{"headless-shell": bins.HeadlessShell, "chromium": bins.Chromium} {
		t.Run(name, func(t *testing.T) {
			if bin == "" {
				if browsertest.CI() && name == "headless-shell" {
					t.Fatal("chromium-headless-shell missing under CI")
				}
				t.Skip(name + " not installed")
			}
			var warned []string
			cfg := Config{StateDir: t.TempDir(), Chrome: bin, Warn: func(r, m string, _ map[string]any) { warned = append(warned, r) }}
			ctx := tctx(t)
			s, _ := Open(ctx, cfg)
			p, err := s.Page(ctx, TabSelector{})
			if err != nil {
				t.Fatal(err)
			}
			first := s.State().Browser
			t.Cleanup(func() { browser.KillGroup(first.PID, syscall.SIGKILL); browser.RemoveProfile(first.ProfileDir) })
			if first.Binary != bin || first.Attached || first.PID == 0 || !p.Owned {
				t.Fatalf("launch info %+v owned %v", first, p.Owned)
			}
			if v, err := p.Evaluate(ctx, "1+1", false); err != nil || string(v) != "2" {
				t.Fatalf("eval: %s %v", v, err)
			}
			p.Close()
			s.Close()
			// Reused by the next command.
			s2, _ := Open(ctx, cfg)
			p2, err := s2.Page(ctx, TabSelector{})
			if err != nil || s2.State().Browser.PID != first.PID {
				t.Fatalf("not reused: %v", err)
			}
			p2.Close()
			s2.Close()
			// Killed mid-session: detected and replaced.
			browser.KillGroup(first.PID, syscall.SIGKILL)
			browser.WaitExit(first.PID, 5*time.Second)
			s3, _ := Open(ctx, cfg)
			p3, err := s3.Page(ctx, TabSelector{})
			if err != nil {
				t.Fatal(err)
			}
			second := s3.State().Browser
			t.Cleanup(func() { browser.KillGroup(second.PID, syscall.SIGKILL); browser.RemoveProfile(second.ProfileDir) })
			if second.PID == first.PID || len(warned) == 0 || warned[0] != "browser-gone" {
				t.Fatalf("not replaced: pid %d→%d warnings %v", first.PID, second.PID, warned)
			}
			if _, err := os.Stat(first.ProfileDir); err == nil {
				t.Errorf("dead browser's temporary profile %s left behind", first.ProfileDir)
			}
			p3.Close()
			res, err := s3.StopBrowser(ctx)
			if err != nil || !res.Stopped || !res.ProfileRemoved {
				t.Fatalf("stop: %+v %v", res, err)
			}
			if proc.Alive(second.PID) {
				t.Fatal("browser still runs after stop")
			}
			s3.Close()
			// --no-launch now fails with no-browser.
			cfg.NoLaunch = true
			s4, _ := Open(ctx, cfg)
			if _, err := s4.Page(ctx, TabSelector{}); reason(err) != "no-browser" {
				t.Fatalf("--no-launch: %v", err)
			}
		})
	}
}

func TestStopNeverEndsAttached(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	if _, err := s.Browser(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.StopBrowser(ctx)
	if err != nil || res.Stopped || !res.Detached {
		t.Fatalf("stop on attached: %+v %v", res, err)
	}
	if !proc.Alive(shared.PID) {
		t.Fatal("the attached browser was ended")
	}
}

// TestAutoConnect finds the shared browser through a DevToolsActivePort file in
// a default profile directory (a fake home).
func TestAutoConnect(t *testing.T) {
	needBrowser(t)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv("HOME", t.TempDir())
	ctx := tctx(t)
	if _, _, err := browser.AutoConnect(ctx, time.Second); reason(err) != "no-browser" {
		t.Fatalf("no profile: %v", err)
	}
	dir := cfgHome + "/chromium"
	os.MkdirAll(dir, 0o700)
	port := shared.Endpoint[len("http://127.0.0.1:"):]
	os.WriteFile(dir+"/DevToolsActivePort", []byte(port+"\n"+browser.PathOf(shared.WebSocket)+"\n"), 0o600)
	s, err := Open(ctx, Config{StateDir: t.TempDir(), AutoConnect: true, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := s.Browser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Attached || b.Source != "auto-connect" || browser.PathOf(b.WebSocket) != browser.PathOf(shared.WebSocket) {
		t.Fatalf("auto-connect: %+v", b)
	}
}

// EvaluateLimited refuses an answer over its limit as it arrives (the size
// read from the message, nothing decoded) and the tab's connection goes on
// working; under the limit the value is returned as Evaluate returns it.
func TestEvaluateLimited(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("index.html"), cdp.WaitLoad)
	_, err := p.EvaluateLimited(ctx, "'x'.repeat(4 << 20)", true, 1<<20)
	e := output.AsError(err)
	if e == nil || e.Reason != "result-too-large" || e.Details["bytes"].(int64) < 4<<20 || e.Details["maxBytes"] != int64(1<<20) {
		t.Fatalf("4 MiB under a 1 MiB limit: %v", err)
	}
	got, err := p.EvaluateLimited(ctx, "'x'.repeat(1000).length", true, 1<<20)
	if err != nil || string(got) != "1000" {
		t.Fatalf("after the refusal: %s %v", got, err)
	}
	got, err = p.Evaluate(ctx, "'x'.repeat(2 << 20).length", true)
	if err != nil || string(got) != "2097152" {
		t.Fatalf("the limit outlived the call: %s %v", got, err)
	}
}

// A cold `dtb open URL` (no browser running) navigates the launch's own blank
// tab: afterwards the browser has exactly one page, the opened one. A second
// open of the same process makes a new tab (the first is in use now).
func TestColdOpenUsesLaunchTab(t *testing.T) {
	needBrowser(t)
	if bins.HeadlessShell == "" {
		if browsertest.CI() {
			t.Fatal("chromium-headless-shell missing under CI")
		}
		t.Skip("chromium-headless-shell not installed")
	}
	cfg := Config{StateDir: t.TempDir(), Chrome: bins.HeadlessShell}
	ctx := tctx(t)
	s, _ := Open(ctx, cfg)
	defer s.Close()
	res, err := s.OpenURL(ctx, OpenOptions{URL: fixture("index.html")})
	if err != nil {
		t.Fatal(err)
	}
	b := s.State().Browser
	t.Cleanup(func() { browser.KillGroup(b.PID, syscall.SIGKILL); browser.RemoveProfile(b.ProfileDir) })
	pages, err := s.ListPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 || pages[0].ID != res.Tab.ID || pages[0].URL != res.URL || res.URL == "" {
		t.Fatalf("after a cold open: %+v (opened %s)", pages, res.Tab.ID)
	}
	if !res.NewTab || s.State().CurrentTab != res.Tab.ID || s.State().Tabs[res.Tab.ID] == nil {
		t.Fatalf("the opened tab is not dtb's current tab: %+v, state %+v", res, s.State())
	}
	p, err := s.Page(ctx, TabSelector{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := p.Evaluate(ctx, "location.href", false); err != nil || string(v) != mustJSON(res.URL) {
		t.Fatalf("the tab's own location: %s %v", v, err)
	}
	p.Close()
	res2, err := s.OpenURL(ctx, OpenOptions{URL: fixture("tall.html")})
	if err != nil {
		t.Fatal(err)
	}
	if pages, _ = s.ListPages(ctx); len(pages) != 2 || res2.Tab.ID == res.Tab.ID {
		t.Fatalf("a second open did not make a new tab: %+v", pages)
	}
	if _, err := s.StopBrowser(ctx); err != nil {
		t.Fatal(err)
	}
}
