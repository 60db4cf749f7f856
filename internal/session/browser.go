package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/proc"
)

// wantSource is the BrowserInfo.Source the configuration asks for ("" when the
// session's remembered browser, or a launch, will do).
func (s *Session) wantSource() string {
	switch {
	case s.cfg.CDP != "":
		raw := strings.TrimSpace(s.cfg.CDP)
		if browser.IsDigits(raw) {
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

// fastBrowser is the browser from the state when it can be used without any
// check (the hot path); nil when the slow path must run.
func (s *Session) fastBrowser() *browser.BrowserInfo {
	b := s.state.Browser
	if b == nil {
		return nil
	}
	if !b.Attached && b.PID > 0 && !proc.Alive(b.PID) {
		// A launched browser that was killed: the session host's pooled
		// connections to it may not have seen their end yet.
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
func (s *Session) Browser(ctx context.Context) (*browser.BrowserInfo, error) {
	if s.checked && s.state.Browser != nil {
		return s.state.Browser, nil
	}
	target, err := s.requested(ctx)
	if err != nil {
		return nil, err
	}
	var out *browser.BrowserInfo
	err = s.Update(ctx, func(st *State) (err error) {
		s.reapLaunch(st)
		switch {
		case target != nil:
			out, err = target, s.adopt(ctx, st, target)
		default:
			if out, err = s.remembered(ctx, st); out == nil && err == nil {
				out, err = s.launchOwn(ctx, st)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	// The session file holds the browser now: its launch record goes (only
	// its own: a later launch may have recorded another meanwhile).
	if rec := browser.ReadLaunchRecord(s.launchRecord()); rec != nil && out != nil && rec.ProfileDir == out.ProfileDir {
		os.Remove(s.launchRecord())
	}
	s.checked = true
	return out, nil
}

// requested resolves the browser --cdp or --auto-connect names (nil when
// neither is given), outside the session lock: it can take a while.
func (s *Session) requested(ctx context.Context) (*browser.BrowserInfo, error) {
	switch {
	case s.cfg.CDP != "":
		cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
		defer cancel()
		info, err := browser.ResolveCDP(s.tlsCtx(cctx), s.cfg.CDP, s.cfg.Headers)
		if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = output.Wrap("no-browser", err, fmt.Sprintf("no answer from --cdp %s within --connect-timeout %s", s.cfg.CDP, s.cfg.ConnectTimeout)).With("endpoint", s.cfg.CDP)
		}
		s.tried = append(s.tried, attempt("cdp", s.cfg.CDP, err))
		return info, err
	case s.cfg.AutoConnect:
		info, tried, err := browser.AutoConnect(ctx, s.cfg.ConnectTimeout)
		s.tried = append(s.tried, tried...)
		return info, err
	}
	return nil, nil
}

// adopt makes the requested browser target the session's (under the lock). It
// refuses while the session's own launched browser still runs elsewhere, and
// ends what is left of a dead one.
func (s *Session) adopt(ctx context.Context, st *State, target *browser.BrowserInfo) error {
	cur := st.Browser
	if cur != nil && !cur.Attached && cur.WebSocket != target.WebSocket && s.ownAlive(ctx, cur) {
		return output.Errorf("session-conflict", "session %q has its own browser (pid %d); stop it with 'dtb browser stop' or use another --session to attach to %s", st.Name, cur.PID, s.cfg.CDP).With("session", st.Name).With("pid", cur.PID)
	}
	if cur != nil && !cur.Attached {
		browser.CleanupDead(ctx, cur)
	}
	if cur == nil || cur.WebSocket != target.WebSocket {
		st.resetBrowser(target)
	} else {
		st.Browser = target
	}
	return nil
}

// remembered is the session's browser when it still answers (under the
// lock). One that went away is forgotten (and what is left of an own one
// ended): nil, with a browser-gone warning, or the browser-gone error when
// --no-launch forbids a new one. nil, nil also when there is none.
func (s *Session) remembered(ctx context.Context, st *State) (*browser.BrowserInfo, error) {
	cur := st.Browser
	if cur == nil {
		return nil, nil
	}
	err := s.reachable(ctx, cur)
	if err == nil {
		return cur, nil
	}
	s.tried = append(s.tried, attempt("session", endpointOf(cur), err))
	what := "the session's browser"
	if cur.Attached {
		what = "the browser the session attached to"
	} else {
		browser.CleanupDead(ctx, cur)
	}
	st.resetBrowser(nil)
	if s.cfg.NoLaunch {
		return nil, output.Errorf("browser-gone", "%s (%s) is gone and --no-launch forbids a new one", what, endpointOf(cur)).With("endpoint", endpointOf(cur)).With("session", st.Name)
	}
	s.warn("browser-gone", fmt.Sprintf("%s (%s) is gone; launching a new one", what, endpointOf(cur)), map[string]any{"endpoint": endpointOf(cur), "pid": cur.PID})
	return nil, nil
}

// launchOwn launches the session's own browser (under the lock, unless
// --no-launch) and takes ownership of its first tab.
func (s *Session) launchOwn(ctx context.Context, st *State) (*browser.BrowserInfo, error) {
	if s.cfg.NoLaunch {
		return nil, output.Errorf("no-browser", "no browser for session %q and --no-launch is set; start one with 'dtb browser launch' or attach with --cdp", st.Name).With("session", st.Name)
	}
	info, err := s.launch(ctx)
	if err != nil {
		return nil, err
	}
	st.resetBrowser(info)
	s.ownFirstTabs(ctx, st, info)
	return info, nil
}

// ownFirstTabs makes a just-launched browser's own first tab dtb's, its
// window fitted to the viewport. The DevTools port can answer before Chrome
// has made that tab, so it is given a moment to appear.
func (s *Session) ownFirstTabs(ctx context.Context, st *State, info *browser.BrowserInfo) {
	pages, err := browser.FirstPages(ctx, info.Endpoint)
	if err != nil {
		return
	}
	if len(pages) > 0 && s.cfg.WindowSize == "" {
		if old := pages[0].ID; s.fitLaunched(ctx, info, old, s.viewport()) {
			if again, err := browser.FirstPages(ctx, info.Endpoint); err == nil {
				pages = slices.DeleteFunc(again, func(p browser.TargetInfo) bool { return p.ID == old })
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

// launchRecord is where a launch of the session is recorded while it runs.
func (s *Session) launchRecord() string {
	return filepath.Join(filepath.Dir(s.st.path), s.cfg.Session+".launch.json")
}

// reapLaunch, under the session's lock, ends the browser a killed launch of
// the session left (its record outlived it), unless the session file holds
// that very browser (dtb was killed after recording it).
func (s *Session) reapLaunch(st *State) {
	path := s.launchRecord()
	left := browser.ReadLaunchRecord(path)
	if left == nil {
		return
	}
	if st.Browser != nil && st.Browser.ProfileDir == left.ProfileDir {
		os.Remove(path)
		return
	}
	browser.ReapLaunch(path)
	s.warn("orphan-stopped", "stopped the browser an interrupted launch of this session had left", map[string]any{"profileDir": left.ProfileDir})
}

func (s *Session) launch(ctx context.Context) (*browser.BrowserInfo, error) {
	bin, tried, err := browser.FindBrowser(s.cfg.Chrome, s.cfg.Headed)
	if err != nil {
		s.tried = append(s.tried, browser.Attempt{Source: "launch", Endpoint: strings.Join(tried, ", "), Error: err.Error()})
		return nil, err
	}
	info, err := browser.Launch(ctx, browser.LaunchOptions{
		Binary:      bin,
		Headed:      s.cfg.Headed,
		UserDataDir: s.cfg.UserDataDir,
		WindowSize:  cmp.Or(s.cfg.WindowSize, s.viewport().String()),
		LogPath:     filepath.Join(filepath.Dir(s.st.path), s.cfg.Session+".browser.log"),
		Timeout:     s.cfg.ConnectTimeout,
		Session:     s.cfg.Session,
		RecordPath:  s.launchRecord(),
	})
	s.tried = append(s.tried, attempt("launch", bin, err))
	return info, err
}

func attempt(source, endpoint string, err error) browser.Attempt {
	a := browser.Attempt{Source: source, Endpoint: endpoint, OK: err == nil}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

func endpointOf(b *browser.BrowserInfo) string {
	if b.Endpoint != "" {
		return b.Endpoint
	}
	return b.WebSocket
}

// ownAlive reports whether the session's own browser still runs and answers.
func (s *Session) ownAlive(ctx context.Context, b *browser.BrowserInfo) bool {
	return s.reachable(ctx, b) == nil
}

// reachable checks a remembered browser by its endpoint answering, as the
// same browser instance. Not by a PID: a launcher script's PID can die while
// the browser it started runs on.
func (s *Session) reachable(ctx context.Context, b *browser.BrowserInfo) error {
	cctx, cancel := context.WithTimeout(ctx, min(3*time.Second, s.cfg.ConnectTimeout))
	defer cancel()
	if b.Endpoint != "" {
		v, err := browser.FetchVersion(s.tlsCtx(cctx), b.Endpoint, s.cfg.Headers)
		if err != nil {
			return err
		}
		if browser.PathOf(v.WebSocket) != browser.PathOf(b.WebSocket) {
			return errors.New("a different browser now answers at " + b.Endpoint)
		}
		return nil
	}
	c, err := s.dial(cctx, b.WebSocket)
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

// BrowserConn is the browser-level websocket (dialled once per process).
func (s *Session) BrowserConn(ctx context.Context) (*cdp.Conn, error) {
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
	// Orphan: a browser an interrupted launch had left was stopped.
	Orphan bool `json:"orphan,omitempty"`
}

// StopBrowser ends the session's own browser (Browser.close, then signals to its
// process group, waiting for exit) and removes its temporary profile. A browser
// the session attached to is never ended: the session only forgets it.
func (s *Session) StopBrowser(ctx context.Context) (*StopResult, error) {
	res := &StopResult{}
	err := s.Update(ctx, func(st *State) error {
		if left := browser.ReadLaunchRecord(s.launchRecord()); left != nil && (st.Browser == nil || st.Browser.ProfileDir != left.ProfileDir) {
			browser.ReapLaunch(s.launchRecord())
			res.Stopped, res.Orphan = true, true
			res.ProfileDir = left.ProfileDir
			res.Message = "stopped the browser an interrupted launch of this session had left"
		}
		os.Remove(s.launchRecord())
		b := st.Browser
		if b == nil {
			if !res.Orphan {
				res.Message = "the session has no browser"
			}
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
		end := browser.Stop(ctx, b)
		res.Stopped = end.Running
		switch {
		case !end.Gone:
			res.Message = "the browser did not exit; its profile is kept"
		case !end.Running:
			res.Message = "the browser had already exited"
		}
		res.ProfileRemoved = end.ProfileRemoved
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
func (s *Session) LaunchBrowser(ctx context.Context) (*browser.BrowserInfo, bool, error) {
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

// BrowserRunning reports, without launching or dialling anything, whether
// session name has a browser that is still running: an attached one, or its
// own browser's process alive.
func BrowserRunning(ctx context.Context, name string) bool {
	sess, err := Open(ctx, Config{Session: name, NoLaunch: true})
	if err != nil {
		return false
	}
	defer sess.Close()
	b := sess.State().Browser
	return b != nil && (b.Attached || proc.Alive(b.PID))
}
