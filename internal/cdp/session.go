package cdp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// Config says how a session reaches its browser. The zero value (plus a session
// name) means: the session's own browser, launched headless on first use.
type Config struct {
	Session        string        // session name; "" means "default"
	StateDir       string        // "" means StateDir()
	CDP            string        // --cdp URL|PORT: attach to a running browser
	Headers        http.Header   // --cdp-header: websocket/HTTP handshake headers
	AutoConnect    bool          // --auto-connect: find the user's running Chrome
	ConnectTimeout time.Duration // how long to wait for a browser to answer (launch, prompt)
	NoLaunch       bool          // fail with no-browser instead of launching
	Headed         bool          // launch with a window (needs a full browser)
	Chrome         string        // --chrome PATH / DTB_CHROME
	UserDataDir    string        // profile for a launch; "" for a temporary one
	WindowSize     string        // WxH window for a launch (dtb browser launch --window-size)
	Viewport       string        // --viewport WxH of the tabs dtb opens; "" for DefaultViewport
	// Warn receives warnings (e.g. a dead browser replaced); nil drops them.
	Warn func(reason, message string, details map[string]any)
}

// Session is one dtb session: its state file and the browser it uses. Opening
// it costs a file read; the browser is touched only when a command needs it.
type Session struct {
	cfg     Config
	st      *store
	state   *State
	checked bool  // the browser was verified (or launched) by this process
	bconn   *Conn // browser websocket, dialled lazily
	tried   []Attempt
	// launchTab is the first tab of a browser this process launched, still
	// unused: a cold `dtb open URL` navigates it instead of opening a second.
	launchTab string
}

// Open reads the session's state. It does not connect.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Session == "" {
		cfg.Session = "default"
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	st, err := newStore(cfg.StateDir, cfg.Session)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, st: st}
	if s.state, err = st.load(); err != nil {
		return nil, err
	}
	// Said on every command that uses such an endpoint, not only the first.
	if cfg.CDP != "" && cleartextRemote(ctx, cfg.CDP) {
		s.warn("insecure-cdp", fmt.Sprintf("--cdp %s is plain http/ws to a host that is not loopback: the browser's traffic and any --cdp-header (an Authorization, say) travel in clear; use https:// or wss://, or an SSH tunnel", cfg.CDP), map[string]any{"endpoint": cfg.CDP})
	}
	return s, nil
}

// Name is the session name.
func (s *Session) Name() string { return s.cfg.Session }

// File is the session file's path.
func (s *Session) File() string { return s.st.path }

// UploadDir is the folder of the private copies uploads hand the browser
// (<state dir>/uploads/<session>); browser stop removes it.
func (s *Session) UploadDir() string {
	return filepath.Join(filepath.Dir(filepath.Dir(s.st.path)), "uploads", s.cfg.Session)
}

// State is the state as last read or written by this process. Treat it as read
// only; change it through Update.
func (s *Session) State() *State { return s.state }

// Update is a locked read-modify-write of the session file: fn gets the newest
// state (expired tab entries already swept) and the file is written atomically
// when fn returns nil.
func (s *Session) Update(ctx context.Context, fn func(*State) error) error {
	ns, err := s.st.update(ctx, fn)
	if err != nil {
		return err
	}
	s.state = ns
	return nil
}

// Close releases the session's connections. It never closes a tab or a browser.
func (s *Session) Close() error {
	if s.bconn != nil {
		s.bconn.release()
		s.bconn = nil
	}
	return nil
}

func (s *Session) warn(reason, msg string, details map[string]any) {
	if s.cfg.Warn != nil {
		s.cfg.Warn(reason, msg, details)
	}
}

// wantSource is the BrowserInfo.Source the configuration asks for ("" when the
// session's remembered browser, or a launch, will do).
func (s *Session) wantSource() string {
	switch {
	case s.cfg.CDP != "":
		raw := strings.TrimSpace(s.cfg.CDP)
		if isDigits(raw) {
			raw = "http://127.0.0.1:" + raw
		} else if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		return "cdp:" + raw
	case s.cfg.AutoConnect:
		return "auto-connect"
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// fastBrowser is the browser from the state when it can be used without any
// check (the hot path); nil when the slow path must run.
func (s *Session) fastBrowser() *BrowserInfo {
	b := s.state.Browser
	if b == nil {
		return nil
	}
	if want := s.wantSource(); want != "" && b.Source != want {
		return nil
	}
	return b
}

// Browser makes sure the session has a reachable browser: the one --cdp or
// --auto-connect names, else the session's remembered browser when it still
// answers, else a new launch (unless --no-launch). A browser that went away is
// detected and replaced, with a browser-gone warning.
func (s *Session) Browser(ctx context.Context) (*BrowserInfo, error) {
	if s.checked && s.state.Browser != nil {
		return s.state.Browser, nil
	}
	var target *BrowserInfo
	switch {
	case s.cfg.CDP != "":
		cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
		info, err := ResolveCDP(cctx, s.cfg.CDP, s.cfg.Headers)
		if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = output.Wrap("no-browser", err, fmt.Sprintf("no answer from --cdp %s within --connect-timeout %s", s.cfg.CDP, s.cfg.ConnectTimeout)).With("endpoint", s.cfg.CDP)
		}
		cancel()
		s.tried = append(s.tried, attempt("cdp", s.cfg.CDP, err))
		if err != nil {
			return nil, err
		}
		target = info
	case s.cfg.AutoConnect:
		info, tried, err := AutoConnect(ctx, s.cfg.ConnectTimeout)
		s.tried = append(s.tried, tried...)
		if err != nil {
			return nil, err
		}
		target = info
	}
	var out *BrowserInfo
	err := s.Update(ctx, func(st *State) error {
		cur := st.Browser
		if target != nil {
			if cur != nil && !cur.Attached && cur.WebSocket != target.WebSocket && s.ownAlive(ctx, cur) {
				return output.Errorf("session-conflict", "session %q has its own browser (pid %d); stop it with 'dtb browser stop' or use another --session to attach to %s", st.Name, cur.PID, s.cfg.CDP).With("session", st.Name).With("pid", cur.PID)
			}
			if cur != nil && !cur.Attached {
				s.cleanupDead(ctx, cur)
			}
			if cur == nil || cur.WebSocket != target.WebSocket {
				st.resetBrowser(target)
			} else {
				st.Browser = target
			}
			out = target
			return nil
		}
		if cur != nil {
			if err := s.reachable(ctx, cur); err == nil {
				out = cur
				return nil
			} else {
				s.tried = append(s.tried, attempt("session", endpointOf(cur), err))
				what := "the session's browser"
				if cur.Attached {
					what = "the browser the session attached to"
				} else {
					s.cleanupDead(ctx, cur)
				}
				st.resetBrowser(nil)
				if s.cfg.NoLaunch {
					return output.Errorf("browser-gone", "%s (%s) is gone and --no-launch forbids a new one", what, endpointOf(cur)).With("endpoint", endpointOf(cur)).With("session", st.Name)
				}
				s.warn("browser-gone", fmt.Sprintf("%s (%s) is gone; launching a new one", what, endpointOf(cur)), map[string]any{"endpoint": endpointOf(cur), "pid": cur.PID})
			}
		}
		if s.cfg.NoLaunch {
			return output.Errorf("no-browser", "no browser for session %q and --no-launch is set; start one with 'dtb browser launch' or attach with --cdp", st.Name).With("session", st.Name)
		}
		info, err := s.launch(ctx)
		if err != nil {
			return err
		}
		st.resetBrowser(info)
		// The launch's own first tab is dtb's. The DevTools port can answer before
		// Chrome has made that tab, so give it a moment to appear.
		if pages, err := firstPages(ctx, info.Endpoint); err == nil {
			if len(pages) > 0 && s.cfg.WindowSize == "" {
				if old := pages[0].ID; s.fitLaunched(ctx, info, old, s.viewport()) {
					if again, err := firstPages(ctx, info.Endpoint); err == nil {
						pages = slices.DeleteFunc(again, func(p TargetInfo) bool { return p.ID == old })
					}
				}
			}
			now := time.Now().UTC()
			for _, p := range pages {
				st.Own(p.ID, "", "", now)
				if st.CurrentTab == "" {
					st.CurrentTab = p.ID
				}
			}
			if len(pages) == 1 && pages[0].URL == "about:blank" {
				s.launchTab = pages[0].ID
			}
		}
		out = info
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.checked = true
	return out, nil
}

func (s *Session) launch(ctx context.Context) (*BrowserInfo, error) {
	bin, tried, err := FindBrowser(s.cfg.Chrome, s.cfg.Headed)
	if err != nil {
		s.tried = append(s.tried, Attempt{Source: "launch", Endpoint: strings.Join(tried, ", "), Error: err.Error()})
		return nil, err
	}
	info, err := Launch(ctx, LaunchOptions{
		Binary:      bin,
		Headed:      s.cfg.Headed,
		UserDataDir: s.cfg.UserDataDir,
		WindowSize:  cmp.Or(s.cfg.WindowSize, s.viewport().String()),
		LogPath:     filepath.Join(filepath.Dir(s.st.path), s.cfg.Session+".browser.log"),
		Timeout:     s.cfg.ConnectTimeout,
		Session:     s.cfg.Session,
	})
	s.tried = append(s.tried, attempt("launch", bin, err))
	return info, err
}

// firstPages lists a just-launched browser's pages, waiting up to half a second
// for its first tab.
func firstPages(ctx context.Context, endpoint string) ([]TargetInfo, error) {
	for i := 0; ; i++ {
		pages, err := listPagesHTTP(ctx, endpoint)
		if err != nil || len(pages) > 0 || i >= 100 {
			return pages, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func attempt(source, endpoint string, err error) Attempt {
	a := Attempt{Source: source, Endpoint: endpoint, OK: err == nil}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

func endpointOf(b *BrowserInfo) string {
	if b.Endpoint != "" {
		return b.Endpoint
	}
	return b.WebSocket
}

// ownAlive reports whether the session's own browser still runs and answers.
func (s *Session) ownAlive(ctx context.Context, b *BrowserInfo) bool {
	return s.reachable(ctx, b) == nil
}

// reachable checks a remembered browser by its endpoint answering, as the
// same browser instance. Not by a PID: a launcher script's PID can die while
// the browser it started runs on.
func (s *Session) reachable(ctx context.Context, b *BrowserInfo) error {
	cctx, cancel := context.WithTimeout(ctx, min(3*time.Second, s.cfg.ConnectTimeout))
	defer cancel()
	if b.Endpoint != "" {
		v, err := fetchVersion(cctx, b.Endpoint, s.cfg.Headers)
		if err != nil {
			return err
		}
		if pathOf(v.WebSocket) != pathOf(b.WebSocket) {
			return errors.New("a different browser now answers at " + b.Endpoint)
		}
		return nil
	}
	c, err := Dial(cctx, b.WebSocket, s.cfg.Headers)
	if err != nil {
		return err
	}
	// The check's connection is kept for the command's browser calls; one it
	// replaces is closed so no websocket outlives its use.
	if s.bconn != nil {
		s.bconn.Close()
	}
	s.bconn = c
	return nil
}

func pathOf(u string) string {
	if i := strings.Index(u, "/devtools/"); i >= 0 {
		return u[i:]
	}
	return u
}

// answers reports whether b's endpoint answers as the same browser.
func answers(ctx context.Context, b *BrowserInfo) bool {
	if b.Endpoint == "" {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := fetchVersion(cctx, b.Endpoint, nil)
	return err == nil && pathOf(v.WebSocket) == pathOf(b.WebSocket)
}

// cleanupDead ends what is left of the session's own browser once it no
// longer answers (a browser hung, or its processes outliving a killed
// launcher), so nothing of it stays orphaned, and removes its temporary
// profile. A browser that still answers is left alone, profile and all.
func (s *Session) cleanupDead(ctx context.Context, b *BrowserInfo) {
	if b == nil || b.Attached || answers(ctx, b) {
		return
	}
	if endProcesses(b, 0) && b.TempProfile && b.ProfileDir != "" {
		removeProfile(b.ProfileDir)
	}
}

// groupOf is the process group dtb started b in.
func groupOf(b *BrowserInfo) int {
	if b.Group != 0 {
		return b.Group
	}
	return b.PID // state from before Group: the PID led the group
}

// endProcesses waits grace for the own browser b's processes to exit, then
// sends them SIGTERM, then SIGKILL, until none remains: the process group dtb
// started it in and every process naming its profile. It reports whether none
// remains.
func endProcesses(b *BrowserInfo, grace time.Duration) bool {
	group := groupOf(b)
	left := func() []int {
		pids, ok := browserProcs(group, b.ProfileDir)
		if !ok { // no /proc: the group and the browser's own PID
			if ProcessAlive(b.PID) && processIs(b.PID, b.ProfileDir) {
				return []int{b.PID}
			}
			return nil
		}
		return pids
	}
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{0, grace}, {syscall.SIGTERM, 3 * time.Second}, {syscall.SIGKILL, 2 * time.Second}} {
		deadline := time.Now().Add(step.wait)
		for {
			pids := left()
			if len(pids) == 0 {
				return true
			}
			if step.sig != 0 {
				signalProcs(pids, step.sig) // again each round: a helper started meanwhile too
				if _, ok := browserProcs(group, b.ProfileDir); !ok {
					killGroup(group, step.sig)
				}
			}
			if !time.Now().Before(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return len(left()) == 0
}

// dial opens a CDP websocket, its connection and handshake bounded by
// --connect-timeout as well as ctx: an endpoint that accepts and never answers
// does not hold a command for its whole --timeout.
func (s *Session) dial(ctx context.Context, ws string) (*Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	return Dial(cctx, ws, s.cfg.Headers)
}

// BrowserConn is the browser-level websocket (dialled once per process).
func (s *Session) BrowserConn(ctx context.Context) (*Conn, error) {
	if s.bconn != nil {
		select {
		case <-s.bconn.Done():
			s.bconn = nil
		default:
			return s.bconn, nil
		}
	}
	b, err := s.Browser(ctx)
	if err != nil {
		return nil, err
	}
	if s.bconn != nil {
		return s.bconn, nil
	}
	c, err := s.dialPooled(ctx, b.WebSocket)
	if err != nil {
		return nil, output.Wrap("browser-gone", err, "cannot connect to the browser").With("endpoint", b.WebSocket)
	}
	s.bconn = c
	return c, nil
}

// StopResult is what StopBrowser did.
type StopResult struct {
	Stopped        bool   `json:"stopped"`
	Detached       bool   `json:"detached,omitempty"`
	PID            int    `json:"pid,omitempty"`
	Binary         string `json:"binary,omitempty"`
	ProfileDir     string `json:"profileDir,omitempty"`
	ProfileRemoved bool   `json:"profileRemoved"`
	Message        string `json:"message,omitempty"`
}

// StopBrowser ends the session's own browser (Browser.close, then signals to its
// process group, waiting for exit) and removes its temporary profile. A browser
// the session attached to is never ended: the session only forgets it.
func (s *Session) StopBrowser(ctx context.Context) (*StopResult, error) {
	res := &StopResult{}
	err := s.Update(ctx, func(st *State) error {
		b := st.Browser
		if b == nil {
			res.Message = "the session has no browser"
			return nil
		}
		res.PID, res.Binary, res.ProfileDir = b.PID, b.Binary, b.ProfileDir
		if b.Attached {
			res.Detached = true
			res.PID = 0
			res.Message = "the browser was attached, not launched by dtb: left running, session detached"
			st.resetBrowser(nil)
			return nil
		}
		// The whole browser ends: whatever answers at its endpoint (whether or
		// not the recorded PID still runs) is asked to close, then every process
		// of its group and profile is signalled until none remains.
		running := answers(ctx, b)
		if running {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			if c, err := Dial(cctx, b.WebSocket, nil); err == nil {
				c.Call(cctx, "", "Browser.close", nil, nil)
				c.Close()
			}
			cancel()
		} else if pids, ok := browserProcs(groupOf(b), b.ProfileDir); ok && len(pids) > 0 || !ok && ProcessAlive(b.PID) && processIs(b.PID, b.ProfileDir) {
			running = true
		}
		gone := endProcesses(b, 5*time.Second)
		res.Stopped = running
		if !running {
			res.Message = "the browser had already exited"
		}
		switch {
		case !gone || answers(ctx, b):
			// Never delete the profile of a browser that still runs.
			res.Message = "the browser did not exit; its profile is kept"
		case b.TempProfile && b.ProfileDir != "":
			res.ProfileRemoved = removeProfile(b.ProfileDir) == nil
		}
		st.resetBrowser(nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	os.RemoveAll(s.UploadDir()) // the browser that was handed the copies is gone or forgotten
	s.checked = false
	return res, nil
}

// LaunchBrowser starts the session's own browser explicitly (dtb browser launch);
// when the session's own browser already runs, it is returned with reused=true.
func (s *Session) LaunchBrowser(ctx context.Context) (*BrowserInfo, bool, error) {
	if cur := s.state.Browser; cur != nil && !cur.Attached && s.reachable(ctx, cur) == nil {
		s.checked = true
		return cur, true, nil
	}
	cfg := s.cfg
	s.cfg.CDP, s.cfg.AutoConnect, s.cfg.NoLaunch = "", false, false
	defer func() { s.cfg.CDP, s.cfg.AutoConnect, s.cfg.NoLaunch = cfg.CDP, cfg.AutoConnect, cfg.NoLaunch }()
	if cur := s.state.Browser; cur != nil && cur.Attached {
		if err := s.Update(ctx, func(st *State) error { st.resetBrowser(nil); return nil }); err != nil {
			return nil, false, err
		}
	}
	b, err := s.Browser(ctx)
	return b, false, err
}
