// Package relay is dtb's receiving half of the dev-toolbar agent protocol: the four
// /__dev-toolbar routes of the playground's Vite middleware (spec §4), served by a
// loopback-only net/http server, plus two things the upstream relay lacks: check-ins
// held open (long-poll) so a queued command is picked up at once, and one slot per
// page so a command can be aimed at one tab. See docs/relay.md.
package relay

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of Options. The command wrapper uses DefaultLongPollMs for its flag,
// because Options.LongPollMs == 0 means "no long-poll".
const (
	// DefaultListen is "localhost": 127.0.0.1 and ::1 both (see listenAll).
	DefaultListen = "localhost:" + DefaultPort
	// DefaultPort is used by no common dev server (Vite 5173, the upstream
	// playground 5273, …), so dtb relay and the app's own server never collide.
	DefaultPort       = "7357"
	DefaultBase       = "/__dev-toolbar"
	DefaultStaleMs    = 3000
	DefaultTimeoutMs  = 10000
	DefaultLongPollMs = 2000
	// DefaultRefreshMs bounds how long GET /state waits for the snapshot of a held
	// page it asked to check in again (Options.RefreshMs).
	DefaultRefreshMs = 1000
	// MaxLongPollMs keeps a held check-in well inside the reporter's 5 s request
	// timeout (spec §3.1); past it the page would abort and log a failure.
	MaxLongPollMs = 4500
	// ShutdownGrace is how long a stopping relay waits for the commands pages have
	// already taken to report, handing out nothing new meanwhile.
	ShutdownGrace = 2 * time.Second
	// Connection limits: a request's headers and its body must arrive within
	// these, a keep-alive connection is closed after IdleTimeout without a
	// request, and past DefaultMaxConns open connections a new one is refused
	// (503 too-many-connections). Held check-ins and waiting commands are not
	// bounded by them: once a body is read, a request may wait.
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	DefaultMaxConns      = 512
	// DefaultWriteTimeout bounds how long an answer may go without being read: a
	// write that makes no progress for this long ends its connection. It restarts
	// at every write, so a long download or a dev server's event stream that the
	// client keeps reading is not cut.
	DefaultWriteTimeout = 30 * time.Second
)

// Options configure a relay. Zero values take the defaults above, except LongPollMs.
type Options struct {
	// Listen is host:port; the host must be loopback (127.0.0.0/8, ::1, localhost).
	// Port 0 picks a free port.
	Listen string
	// Upstream, when set, is reverse-proxied for every path outside Base.
	Upstream string
	// Static, when set and Upstream is not, is a directory served outside Base.
	Static string
	// StaleMs: a check-in counts as a live connection for this long (inclusive).
	StaleMs int
	// TimeoutMs: how long POST /commands/:id waits for the page (restarted at pickup
	// and whenever the page holding the command posts a result).
	TimeoutMs int
	// Base is the route prefix.
	Base string
	// LongPollMs is the longest a result-less check-in is held open waiting for a
	// command; 0 disables holding. The hold is trimmed to end just before the page's
	// next poll tick (see docs/relay.md).
	LongPollMs int
	// HeaderTimeout, BodyTimeout and IdleTimeout bound reading a request's headers,
	// reading its body, and an idle keep-alive connection (0: the defaults above).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// WriteTimeout: an answer whose client reads none of it for this long is cut
	// off, its connection closed (0: DefaultWriteTimeout).
	WriteTimeout time.Duration
	// MaxConns is the ceiling on open connections (0: DefaultMaxConns); past it a
	// new connection is answered 503 too-many-connections and closed.
	MaxConns int
	// RefreshMs: a GET /state for a page whose check-in is held releases it with a
	// refresh probe (see refresh) and waits up to this long for the snapshot that
	// follows, so the answer is the page as of the read; 0 answers at once with the
	// last snapshot, as upstream.
	RefreshMs int
	// Logf receives diagnostics (proxy errors, recovered panics); nil discards them.
	Logf func(format string, args ...any)
}

// ErrNonLoopback is what errors.Is finds in the error New or Listen return for a
// listen address that is not loopback.
var ErrNonLoopback = errors.New("listen address is not loopback")

// OptionError is a refused Options value or listen address. Reason is a stable
// dtb reason: "non-loopback-host" (exit 6) for a non-loopback Listen,
// "port-in-use" (exit 6) when Listen finds the address taken, "usage" otherwise.
type OptionError struct {
	Reason  string
	Message string
	err     error
}

func (e *OptionError) Error() string { return e.Message }
func (e *OptionError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &OptionError{Reason: "usage", Message: "relay: " + fmt.Sprintf(format, args...)}
}

func nonLoopback(addr string) error {
	return &OptionError{
		Reason: "non-loopback-host",
		Message: fmt.Sprintf("relay: refusing to listen on %q: not a loopback address. "+
			"The relay runs arbitrary toolbar commands on the open page and is localhost-only by design.", addr),
		err: ErrNonLoopback,
	}
}

// Server is a relay. It is safe for concurrent use.
type Server struct {
	listen     string
	base       string
	staleMs    int64
	timeoutMs  int64
	longPollMs int64
	refreshMs  int64
	fallback   http.Handler
	logf       func(format string, args ...any)
	handler    http.Handler
	secret     string   // authenticates the rawTargetHeader our own listener adds
	idKey      [32]byte // keys publicID: per relay process, never shown

	headerTimeout, bodyTimeout, idleTimeout, writeTimeout time.Duration
	maxConns                                              int

	lnMu sync.Mutex
	ln   net.Listener
	// boundHost is the IP literal the listener is bound to (a string), which the
	// Host guard accepts as well as the loopback names.
	boundHost atomic.Value

	// hook, when set by a test, runs at the start of every relay route.
	hook func(route string)

	mu    sync.Mutex
	state state
}

// New validates opts and builds a relay; it does not bind (see Listen).
func New(opts Options) (*Server, error) {
	s := &Server{
		listen:     opts.Listen,
		base:       opts.Base,
		staleMs:    int64(opts.StaleMs),
		timeoutMs:  int64(opts.TimeoutMs),
		longPollMs: int64(opts.LongPollMs),
		refreshMs:  int64(opts.RefreshMs),
		logf:       opts.Logf,

		headerTimeout: cmp.Or(opts.HeaderTimeout, DefaultHeaderTimeout),
		bodyTimeout:   cmp.Or(opts.BodyTimeout, DefaultBodyTimeout),
		idleTimeout:   cmp.Or(opts.IdleTimeout, DefaultIdleTimeout),
		writeTimeout:  cmp.Or(opts.WriteTimeout, DefaultWriteTimeout),
		maxConns:      cmp.Or(opts.MaxConns, DefaultMaxConns),
	}
	if s.listen == "" {
		s.listen = DefaultListen
	}
	if s.base == "" {
		s.base = DefaultBase
	}
	if s.staleMs == 0 {
		s.staleMs = DefaultStaleMs
	}
	if s.timeoutMs == 0 {
		s.timeoutMs = DefaultTimeoutMs
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	switch {
	case s.staleMs < 0:
		return nil, usageError("StaleMs must not be negative (got %d)", s.staleMs)
	case s.timeoutMs < 0:
		return nil, usageError("TimeoutMs must not be negative (got %d)", s.timeoutMs)
	case s.headerTimeout < 0 || s.bodyTimeout < 0 || s.idleTimeout < 0 || s.writeTimeout < 0:
		return nil, usageError("the header, body, idle and write timeouts must not be negative")
	case s.refreshMs < 0 || s.refreshMs > MaxLongPollMs:
		return nil, usageError("RefreshMs must be between 0 and %d (got %d)", MaxLongPollMs, s.refreshMs)
	case s.maxConns < 0:
		return nil, usageError("MaxConns must not be negative (got %d)", s.maxConns)
	case s.longPollMs < 0 || s.longPollMs > MaxLongPollMs:
		return nil, usageError("LongPollMs must be between 0 and %d, below the page's 5000 ms request timeout (got %d)", MaxLongPollMs, s.longPollMs)
	}
	s.base = strings.TrimRight(s.base, "/")
	if !strings.HasPrefix(s.base, "/") || strings.ContainsAny(s.base, "?#") {
		return nil, usageError("Base must be a path such as %q (got %q)", DefaultBase, opts.Base)
	}
	listen, err := checkListen(s.listen)
	if err != nil {
		return nil, err
	}
	s.listen = listen

	switch {
	case opts.Upstream != "":
		u, err := url.Parse(opts.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageError("Upstream must be an http(s) URL such as http://localhost:5173 (got %q)", opts.Upstream)
		}
		s.fallback = s.proxy(u)
	case opts.Static != "":
		fi, err := os.Stat(opts.Static)
		if err != nil || !fi.IsDir() {
			return nil, usageError("Static must be a directory (got %q)", opts.Static)
		}
		sf, err := newStaticFiles(opts.Static, s.logf)
		if err != nil {
			return nil, usageError("Static: %v", err)
		}
		s.fallback = sf
	default:
		s.fallback = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "404 page not found: this dtb relay serves only "+s.base+"/*", http.StatusNotFound)
		})
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, err
	}
	s.secret = hex.EncodeToString(secret[:])
	if _, err := rand.Read(s.idKey[:]); err != nil {
		return nil, err
	}
	s.state.init()
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s, nil
}

// checkListen normalises host:port (a bare host gets the default port) and refuses
// any host that is not loopback, so the relay can never be bound where another
// machine could drive the page.
func checkListen(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), DefaultPort
		if strings.Contains(addr, ":") && net.ParseIP(host) == nil {
			return "", usageError("Listen must be host:port (got %q)", addr)
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", usageError("Listen has a bad port (got %q)", addr)
	}
	if !loopbackHost(host) {
		return "", nonLoopback(addr)
	}
	return net.JoinHostPort(host, port), nil
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// proxy keeps the browser's Host header (as NewSingleHostReverseProxy does), so a dev
// server behind the relay sees the loopback name the page was opened with.
func (s *Server) proxy(target *url.URL) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.logf("relay: upstream %s: %v", target, err)
			http.Error(w, "dtb relay: upstream "+target.String()+" is unreachable: "+err.Error(), http.StatusBadGateway)
		},
		ErrorLog: log.New(logWriter(s.logf), "", 0),
	}
}

// Handler is the whole relay: the routes under Base, then Upstream or Static.
func (s *Server) Handler() http.Handler { return s.handler }

// Listen binds the listen address and returns the actual address (useful with port
// 0). Calling it again returns the same address.
func (s *Server) Listen() (net.Addr, error) {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.ln != nil {
		return s.ln.Addr(), nil
	}
	ln, err := listenAll(s.listen)
	var inUse *inUseError
	if errors.As(err, &inUse) {
		return nil, &OptionError{
			Reason: "port-in-use",
			Message: fmt.Sprintf("relay: %s is already in use (another dtb relay, or a dev server?). "+
				"Pick another address, or --listen 127.0.0.1:0 for a free port (the ready line says which).", inUse.addr),
			err: inUse.err,
		}
	}
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	s.ln = rawTargetListener{Listener: newLimitListener(ln, s.maxConns, s.base, s.logf), secret: s.secret}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.To4() != nil {
		s.boundHost.Store(tcp.IP.String())
	}
	return ln.Addr(), nil
}

type inUseError struct {
	addr string
	err  error
}

func (e *inUseError) Error() string { return e.addr + ": " + e.err.Error() }

// listenAll binds addr. "localhost" is every loopback address a browser may reach
// under that name, 127.0.0.1 and ::1 (Chrome tries both whatever the hosts file
// says), on one port: bound to one only, a second relay on the other address of the
// same port would start beside it, and a page would check in to one while dtb
// reads the other. An address the machine does not have (no IPv6) is skipped; one
// in use is an *inUseError. With port 0 the port the first address got is used for
// the others, retried a few times when one of them has it taken.
func listenAll(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !strings.EqualFold(host, "localhost") {
		ln, err := net.Listen("tcp", addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, &inUseError{addr, err}
		}
		return ln, err
	}
	for try := 0; ; try++ {
		lns, err := bindLoopbacks(port)
		var inUse *inUseError
		if errors.As(err, &inUse) && port == "0" && try < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(lns) == 1 {
			return lns[0], nil
		}
		return newMultiListener(lns), nil
	}
}

func bindLoopbacks(port string) ([]net.Listener, error) {
	var lns []net.Listener
	fail := func(err error) ([]net.Listener, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, err
	}
	for i, ip := range []string{"127.0.0.1", "::1"} {
		a := net.JoinHostPort(ip, port)
		ln, err := net.Listen("tcp", a)
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			return fail(&inUseError{a, err})
		case err != nil && i > 0:
			continue // no such address here (IPv6 off)
		case err != nil:
			return fail(err)
		}
		lns = append(lns, ln)
		_, port, _ = net.SplitHostPort(ln.Addr().String())
	}
	return lns, nil
}

// multiListener accepts from several listeners as one; Addr is the first's.
type multiListener struct {
	lns   []net.Listener
	conns chan net.Conn
	errc  chan error
	done  chan struct{}
	once  sync.Once
}

func newMultiListener(lns []net.Listener) *multiListener {
	m := &multiListener{lns: lns, conns: make(chan net.Conn), errc: make(chan error, len(lns)), done: make(chan struct{})}
	for _, ln := range lns {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					m.errc <- err
					return
				}
				select {
				case m.conns <- c:
				case <-m.done:
					c.Close()
					return
				}
			}
		}()
	}
	return m
}

func (m *multiListener) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case err := <-m.errc:
		m.Close()
		m.errc <- err // later Accepts fail too
		return nil, err
	}
}

func (m *multiListener) Close() error {
	m.once.Do(func() {
		close(m.done)
		for _, ln := range m.lns {
			ln.Close()
		}
	})
	return nil
}

func (m *multiListener) Addr() net.Addr { return m.lns[0].Addr() }

// Serve serves until ctx is done (binding first if Listen was not called). Then it
// stops handing out commands, answers the callers of those not picked up with 503
// server-closing (pickedUp false), releases held check-ins, gives commands already
// taken by a page up to ShutdownGrace to report (answering the rest 503
// server-closing, pickedUp true), and only then closes the listener and the
// connections. It returns nil
// after a shutdown caused by ctx, or the error that stopped serving.
func (s *Server) Serve(ctx context.Context) error {
	if _, err := s.Listen(); err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.headerTimeout,
		IdleTimeout:       s.idleTimeout,
		ErrorLog:          log.New(logWriter(s.logf), "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if reserveConn(c) {
				return context.WithValue(ctx, reserveKey{}, true)
			}
			return ctx
		},
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(s.ln) }()
	select {
	case err := <-done:
		s.closeAll(0)
		return err
	case <-ctx.Done():
	}
	s.closeAll(ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-done
	return nil
}

// reserveKey marks the context of a request on a connection served past the
// connection ceiling (see limitListener).
type reserveKey struct{}

// logWriter adapts Logf for the standard library's loggers.
type logWriter func(format string, args ...any)

func (f logWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ io.Writer = logWriter(nil)
