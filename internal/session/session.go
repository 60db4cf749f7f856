package session

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/cdp"
)

// Config says how a session reaches its browser. The zero value (plus a session
// name) means: the session's own browser, launched headless on first use.
type Config struct {
	Session        string        // session name; "" means "default"
	StateDir       string        // "" means StateDir()
	CDP            string        // --cdp URL|PORT: attach to a running browser
	Headers        http.Header   // --cdp-header: websocket/HTTP handshake headers
	CAFile         string        // --cdp-ca: a private CA (PEM) a TLS --cdp is verified with, besides the system's
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
	checked bool      // the browser was verified (or launched) by this process
	bconn   *cdp.Conn // browser websocket, dialled lazily
	tried   []browser.Attempt
	// launchTab is the first tab of a browser this process launched, still
	// unused: a cold `dtb open URL` navigates it instead of opening a second.
	launchTab string
	// tls verifies a TLS --cdp (nil: the system's roots).
	tls *tls.Config
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
	if cfg.CAFile != "" {
		if s.tls, err = browser.TLSWithCA(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	if s.state, err = st.load(); err != nil {
		return nil, err
	}
	// Said on every command that uses such an endpoint, not only the first.
	if cfg.CDP != "" && browser.CleartextRemote(ctx, cfg.CDP) {
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

// DownloadDir is where downloads of the session's actions are saved
// (<cache>/downloads/<session>), or "" for a browser dtb attached to: the
// user's browser keeps its own download settings.
func (s *Session) DownloadDir() string {
	if b := s.state.Browser; b == nil || b.Attached {
		return ""
	}
	base, err := CacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "downloads", s.cfg.Session)
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
		s.bconn.Release()
		s.bconn = nil
	}
	return nil
}

func (s *Session) warn(reason, msg string, details map[string]any) {
	if s.cfg.Warn != nil {
		s.cfg.Warn(reason, msg, details)
	}
}

// dial opens a CDP websocket, its connection and handshake bounded by
// --connect-timeout as well as ctx: an endpoint that accepts and never answers
// does not hold a command for its whole --timeout.
func (s *Session) dial(ctx context.Context, ws string) (*cdp.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	c, err := cdp.DialTLS(cctx, ws, s.cfg.Headers, s.tls)
	if browser.Refused(err) != 0 {
		return nil, browser.Unauthorized(err, ws)
	}
	return c, err
}

// tlsCtx carries the session's TLS settings (--cdp-ca) to discovery requests.
func (s *Session) tlsCtx(ctx context.Context) context.Context { return browser.WithTLS(ctx, s.tls) }

// dialPooled is dial through the session host's connection pool when this
// process is the host (cdp.Pool).
func (s *Session) dialPooled(ctx context.Context, ws string) (*cdp.Conn, error) {
	return cdp.DialPooled(ctx, ws, s.cfg.Headers, func(ctx context.Context) (*cdp.Conn, error) { return s.dial(ctx, ws) })
}
