package host

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/hostwire"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/proc"
	"github.com/dtb-cli/dtb/internal/session"
)

// DefaultIdle is how long a host waits for a command before it exits.
const DefaultIdle = 30 * time.Minute

// Runner runs one command line with the request's streams and environment
// and returns its exit code. ctx ends when the CLI is interrupted or gone.
type Runner func(ctx context.Context, req *hostwire.Request, stdout, stderr io.Writer) int

// Options configure Serve.
type Options struct {
	StateDir, Session string
	Build             string
	Idle              time.Duration // DefaultIdle when 0
	// RecordLimit: requests and console messages kept per tab
	// (pagedata.DefaultRecordLimit when 0).
	RecordLimit int
	Run         Runner
}

type server struct {
	opts     Options
	paths    Paths
	ln       *net.UnixListener
	pool     *pool
	mu       sync.Mutex
	active   int
	lastUse  time.Time
	quit     chan struct{}
	quitOnce sync.Once
	wg       sync.WaitGroup
}

// Serve runs the host of a session until it is told to quit, replaced, idle
// for opts.Idle, its socket is removed, or the session's browser is gone.
func Serve(opts Options) error {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	// A command allocates a few MB (its command tree, flags, JSON) on a heap
	// that stays small: collecting less often takes the collector off most
	// commands' path.
	debug.SetGCPercent(400)
	// One P: a command's work is mostly waiting for the browser, and with
	// one P the goroutine its answer wakes runs on the thread that read it,
	// with no hand-off between threads (a hosted click 0.7 ms and a type
	// 0.9 ms faster, paired, on 2 CPUs shared with the browser).
	runtime.GOMAXPROCS(1)
	paths, err := PathsFor(opts.StateDir, opts.Session)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(paths.Socket), 0o700); err != nil {
		return err
	}
	// Whoever started this host held the start lock and found no host
	// answering: a socket file left here is stale.
	os.Remove(paths.Socket)
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: paths.Socket, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return err
	}
	ln.SetUnlinkOnClose(false) // removed by shutdown only while it is still ours
	os.Chmod(paths.Socket, 0o600)
	sockStat, _ := os.Stat(paths.Socket)
	s := &server{opts: opts, paths: paths, ln: ln, pool: newPool(), lastUse: time.Now(), quit: make(chan struct{})}
	cdp.Pool = s.pool
	pagedata.Recording = pagedata.NewRecorder(opts.RecordLimit)
	pagedata.Recording.OnDialog = s.noteDialog
	info := Info{PID: os.Getpid(), Since: time.Now().UTC().Truncate(time.Second), IdleLimit: opts.Idle.String(), Build: opts.Build, Socket: paths.Socket}
	writeInfo(paths, info)
	var infoMu sync.Mutex
	pagedata.Routing = &pagedata.Router{OnChange: func(routes []pagedata.Route) {
		// dtb status (which attaches directly) shows the routes from here.
		infoMu.Lock()
		defer infoMu.Unlock()
		info.Routes = routes
		writeInfo(paths, info)
	}}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt, syscall.SIGHUP)
	go func() {
		select {
		case <-sig:
			s.stop()
		case <-s.quit:
		}
	}()
	go s.acceptLoop()
	go s.watch(sockStat)
	<-s.quit
	ln.Close()
	if st, err := os.Stat(paths.Socket); err == nil && sockStat != nil && os.SameFile(st, sockStat) {
		os.Remove(paths.Socket)
	}
	if in := readInfoFile(paths); in != nil && in.PID == os.Getpid() {
		os.Remove(paths.Info)
	}
	// Commands still running (a Ctrl-C'd CLI's) get a moment to finish.
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	s.pool.closeAll()
	pagedata.Recording.Close()
	return nil
}

// beforeStart, when set (tests only), runs just before the host decides to
// start a request: a host slower than the CLI's patience.
var beforeStart func()

func (s *server) stop() { s.quitOnce.Do(func() { close(s.quit) }) }

func (s *server) acceptLoop() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			select {
			case <-s.quit:
				return
			default:
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			s.stop()
			return
		}
		if !samePeer(c) {
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.handle(c)
		}()
	}
}

// watch ends the host when it is idle too long, its socket file is removed
// or replaced (its state folder deleted, say), or its browser is gone.
func (s *server) watch(sock os.FileInfo) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.pool.prune()
		st, err := os.Stat(s.paths.Socket)
		if err != nil || sock == nil || !os.SameFile(st, sock) {
			s.stop()
			return
		}
		s.mu.Lock()
		idle := s.active == 0 && time.Since(s.lastUse) >= s.opts.Idle
		busy := s.active > 0
		s.mu.Unlock()
		if idle || (!busy && s.browserGone()) {
			s.stop()
			return
		}
	}
}

// browserGone: the session had a browser through this host and now has none
// (stopped by a direct attach) or its process died.
func (s *server) browserGone() bool {
	if !s.pool.everUsed() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	sess, err := session.Open(ctx, session.Config{Session: s.opts.Session, StateDir: s.opts.StateDir})
	if err != nil {
		return false
	}
	defer sess.Close()
	b := sess.State().Browser
	if b == nil {
		return true
	}
	return !b.Attached && b.PID > 0 && !proc.Alive(b.PID)
}

// noteDialog keeps the session's record of the tab's open dialog as the
// browser reports it, so that a dialog opened between commands is known:
// an armed answer answers it, else dtb dialog shows it and the next command
// on the tab refuses at once (dialog-open) instead of waiting on the blocked
// page. While a command holds the tab its own guard answers the dialog.
func (s *server) noteDialog(tab string, d *cdp.Dialog, answer func(answer, text string) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sess, err := session.Open(ctx, session.Config{Session: s.opts.Session, StateDir: s.opts.StateDir})
	if err != nil {
		return
	}
	defer sess.Close()
	if s.pool.busy(tab) {
		answer = nil
	}
	sess.NoteDialog(ctx, tab, d, answer)
}

func (s *server) handle(c *net.UnixConn) {
	typ, body, err := hostwire.ReadFrame(c)
	if err != nil {
		return
	}
	switch typ {
	case hostwire.FrameQuit:
		hostwire.WriteJSON(c, hostwire.FrameExit, hostwire.ExitMsg{})
		s.stop()
		return
	case hostwire.FrameRequest:
	default:
		return
	}
	var req hostwire.Request
	if err := json.Unmarshal(body, &req); err != nil {
		return
	}
	if req.Build != s.opts.Build {
		// Replaced on first contact: the CLI of another build starts its own.
		hostwire.WriteJSON(c, hostwire.FrameMismatch, hostwire.MismatchMsg{Build: s.opts.Build, PID: os.Getpid()})
		s.stop()
		return
	}
	select {
	case <-s.quit:
		return // shutting down: the CLI attaches directly
	default:
	}
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.lastUse = time.Now()
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wmu sync.Mutex
	send := func(t byte, b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return hostwire.WriteFrame(c, t, b)
	}
	// Started or withdrawn, never both: a CLI that gave up waiting withdraws
	// the request and attaches directly only once told it will not run here.
	var state sync.Mutex
	started, withdrawn := false, false
	// A cancel frame or the CLI going away interrupts the command.
	go func() {
		for {
			t, _, err := hostwire.ReadFrame(c)
			if t == hostwire.FrameWithdraw && err == nil {
				state.Lock()
				if !started {
					withdrawn = true
					send(hostwire.FrameWithdrawn, nil)
				}
				state.Unlock()
				continue
			}
			if err != nil || t == hostwire.FrameCancel {
				cancel()
				return
			}
		}
	}()
	if beforeStart != nil {
		beforeStart()
	}
	state.Lock()
	if withdrawn || send(hostwire.FrameStarted, nil) != nil {
		state.Unlock()
		return
	}
	started = true
	state.Unlock()
	code := s.opts.Run(ctx, &req, frameWriter{send, hostwire.FrameStdout}, frameWriter{send, hostwire.FrameStderr})
	b, _ := json.Marshal(hostwire.ExitMsg{Code: code})
	send(hostwire.FrameExit, b)
}

type frameWriter struct {
	send func(byte, []byte) error
	typ  byte
}

func (w frameWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := w.send(w.typ, append([]byte(nil), p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func readInfoFile(p Paths) *Info {
	b, err := os.ReadFile(p.Info)
	if err != nil {
		return nil
	}
	var in Info
	if json.Unmarshal(b, &in) != nil {
		return nil
	}
	return &in
}
