package hostwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dtb-cli/dtb/internal/proc"
)

// AnswerWait is how long a CLI waits for a host to connect and take its
// command before it attaches directly instead.
const AnswerWait = 100 * time.Millisecond

// WithdrawWait is how long a CLI that gave up waiting waits for the host to
// confirm it will not run the command (or to say it already started it).
const WithdrawWait = 500 * time.Millisecond

// startWait bounds the start of a new host (a fresh process, up to its
// socket answering).
const startWait = 3 * time.Second

// Conn is a connection to a host's socket.
type Conn interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
	Close() error
	SetDeadline(time.Time) error
}

// Client is the CLI's side of a session's host.
type Client struct {
	Paths Paths
	Build string
	// Start is the command line of a new host (the dtb binary and its
	// arguments) and its environment; nil: only a running host is used
	// (ErrNoHost when none answers).
	Start []string
	Env   []string
}

// ErrNoHost: no host runs, and the client was not to start one.
var ErrNoHost = errors.New("no session host runs")

// Unavailable is a host that could not take the command: the CLI attaches
// directly (and says so in a warning).
type Unavailable struct {
	Why string
	Err error
}

func (e *Unavailable) Error() string { return "session host unavailable: " + e.Why }
func (e *Unavailable) Unwrap() error { return e.Err }

// GoneError is a host that went away while it ran the command: the command
// may have had its effect.
type GoneError struct{ Err error }

func (e *GoneError) Error() string { return "the session host went away: " + e.Err.Error() }

// Forward runs the command line args of session through its host, with
// this process's working folder and environment: engine is dtb-engine (the
// host's program, whose file names the build); startHost says whether a host
// may be started for it (else ErrNoHost when none runs); outTTY and errTTY
// say whether stdout and stderr are terminals.
func Forward(ctx context.Context, args []string, session, engine string, startHost, outTTY, errTTY bool, stdout, stderr io.Writer) (int, error) {
	paths, err := PathsFor("", session)
	if err != nil {
		return 0, &Unavailable{Why: err.Error(), Err: err}
	}
	var start []string
	if startHost {
		start = StartArgs(engine, session, os.Getenv)
	}
	cwd, _ := os.Getwd()
	environ := os.Environ()
	c := &Client{Paths: paths, Build: BuildID(engine), Start: start, Env: HostEnv(environ)}
	return c.Run(ctx, NewRequest(args, cwd, environ, outTTY, errTTY), stdout, stderr)
}

// Run runs req through the session's host, starting one when none answers,
// and copies its output to stdout and stderr. It returns an *Unavailable
// before the host took the command, a *GoneError after.
func (c *Client) Run(ctx context.Context, req *Request, stdout, stderr io.Writer) (int, error) {
	req.Build = c.Build
	for attempt := 0; ; attempt++ {
		conn, err := c.connect()
		if err != nil {
			return 0, err
		}
		code, err := c.exchange(ctx, conn, req, stdout, stderr)
		var mm *mismatch
		if closedOnUs(err) && attempt == 0 {
			// A host that was closing as we connected (its idle exit, a
			// kill whose last thread has not yet exited): the request never
			// reached it; reach, or start, the next one.
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if errors.As(err, &mm) && attempt == 0 {
			// A host of another build: it is quitting; wait for it, then
			// start ours.
			waitExit(mm.PID, time.Second)
			continue
		}
		return code, err
	}
}

// closedOnUs: the host's end of the connection closed before it took the
// request (a host answers FrameStarted before it runs one, so the request did
// not run).
func closedOnUs(err error) bool {
	var un *Unavailable
	return errors.As(err, &un) && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
}

type mismatch struct{ PID int }

func (m *mismatch) Error() string { return fmt.Sprintf("host %d is another build", m.PID) }

// connect reaches the running host, or starts one.
func (c *Client) connect() (Conn, error) {
	if conn, err := Dial(c.Paths.Socket, AnswerWait); err == nil {
		return conn, nil
	}
	if c.Start == nil {
		return nil, ErrNoHost
	}
	return c.start()
}

// start starts a host under the start lock (two CLIs racing start one) and
// waits for its socket to answer.
func (c *Client) start() (Conn, error) {
	if len(c.Paths.Socket) >= 104 {
		return nil, &Unavailable{Why: "the socket path is too long for a unix socket: " + c.Paths.Socket}
	}
	if err := os.MkdirAll(filepath.Dir(c.Paths.Lock), 0o700); err != nil {
		return nil, &Unavailable{Why: err.Error()}
	}
	lf, err := os.OpenFile(c.Paths.Lock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, &Unavailable{Why: err.Error()}
	}
	defer lf.Close()
	deadline := time.Now().Add(startWait)
	for syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			return nil, &Unavailable{Why: "another dtb holds the host start lock"}
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	// Started by the CLI that held the lock before us?
	if conn, err := Dial(c.Paths.Socket, AnswerWait); err == nil {
		return conn, nil
	}
	if pid := runningPID(c.Paths); pid != 0 {
		// A live host whose socket does not answer: hung. Replace it.
		syscall.Kill(pid, syscall.SIGKILL)
		waitExit(pid, 500*time.Millisecond)
	}
	log, err := os.OpenFile(c.Paths.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, &Unavailable{Why: err.Error()}
	}
	defer log.Close()
	cmd := exec.Command(c.Start[0], c.Start[1:]...)
	cmd.Env = c.Env
	cmd.Stderr = log
	cmd.Dir = "/"
	// Its own session and process group: a Ctrl-C in the terminal or the
	// end of the CLI's process group does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, &Unavailable{Why: err.Error()}
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for time.Now().Before(deadline) {
		if conn, err := Dial(c.Paths.Socket, AnswerWait); err == nil {
			return conn, nil
		}
		select {
		case <-exited:
			return nil, &Unavailable{Why: fmt.Sprintf("the new host (pid %d) exited at start; see %s", pid, c.Paths.Log)}
		case <-time.After(3 * time.Millisecond):
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	return nil, &Unavailable{Why: "the new host did not answer in time"}
}

// exchange sends req on conn and relays the host's answer.
func (c *Client) exchange(ctx context.Context, conn Conn, req *Request, stdout, stderr io.Writer) (int, error) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(AnswerWait))
	if err := WriteFrame(conn, FrameRequest, req.AppendJSON(nil)); err != nil {
		return 0, &Unavailable{Why: err.Error(), Err: err}
	}
	typ, body, err := ReadFrame(conn)
	if err != nil {
		// No answer in time. The host may still be about to start the
		// command: it must not run here and in the host both, so the CLI
		// withdraws the request and falls back only once the host says it
		// will not run it (or does not answer at all: it is hung).
		conn.SetDeadline(time.Now().Add(WithdrawWait))
		if WriteFrame(conn, FrameWithdraw, nil) != nil {
			return 0, &Unavailable{Why: "no answer: " + err.Error(), Err: err}
		}
		if typ, body, err = ReadFrame(conn); err != nil || typ == FrameWithdrawn {
			return 0, &Unavailable{Why: "no answer in time", Err: err}
		}
	}
	switch typ {
	case FrameStarted:
	case FrameMismatch:
		var m MismatchMsg
		json.Unmarshal(body, &m)
		return 0, &mismatch{PID: m.PID}
	default:
		return 0, &Unavailable{Why: fmt.Sprintf("unexpected answer %q", typ)}
	}
	conn.SetDeadline(time.Time{})
	// Ctrl-C: the host cancels the command and answers with its exit code.
	stop := context.AfterFunc(ctx, func() { WriteFrame(conn, FrameCancel, nil) })
	defer stop()
	for {
		typ, body, err := ReadFrame(conn)
		if err != nil {
			return 0, &GoneError{Err: err}
		}
		switch typ {
		case FrameStdout:
			stdout.Write(body)
		case FrameStderr:
			stderr.Write(body)
		case FrameExit:
			code, err := ParseExit(body)
			if err != nil {
				return 0, &GoneError{Err: err}
			}
			return code, nil
		}
	}
}

// Quit asks the session's host to exit and waits (up to wait) for its
// process to end; one that does not is killed. It reports the host's pid, 0
// when none ran.
func Quit(p Paths, wait time.Duration) int {
	pid := runningPID(p)
	if conn, err := Dial(p.Socket, AnswerWait); err == nil {
		conn.SetDeadline(time.Now().Add(wait))
		if WriteFrame(conn, FrameQuit, nil) == nil {
			ReadFrame(conn)
		}
		conn.Close()
	}
	if pid == 0 {
		return 0
	}
	if !waitExit(pid, wait) {
		syscall.Kill(pid, syscall.SIGKILL)
		waitExit(pid, time.Second)
	}
	return pid
}

// waitExit waits for pid to end; false when it still runs after wait.
func waitExit(pid int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for proc.Alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
