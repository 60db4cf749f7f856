// Package front is dtb's front (cmd/dtb): the process a user or an agent
// starts for every command. A browser command goes to the session host over
// its socket and the host's answer is relayed as it comes; everything else,
// and a command the host cannot take, goes to the engine (dtb-engine, next to
// this binary), which replaces this process. The front links no more than the
// host's wire: a Go process starts in about a millisecond, while the engine's
// dependencies (jq, the reader, the MCP SDK …) cost several in package
// initialisation alone, more than a whole warm command takes in the host.
package front

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/dtb-cli/dtb/internal/hostwire"
)

// EngineName is the engine's file name, next to the front's.
const EngineName = "dtb-engine"

// exitInterrupted is the exit code of a command cut short by Ctrl-C or
// SIGTERM (internal/output's table).
const exitInterrupted = 130

// Main runs one dtb command line and returns its exit code.
func Main(args []string) int {
	engine, err := enginePath()
	if err != nil {
		return failNoEngine("dtb's engine is missing: " + err.Error() + "; install both binaries (go install github.com/dtb-cli/dtb/cmd/...@latest)")
	}
	// A browser command starts the session's host if needed; a toolbar
	// command uses it only when it runs already.
	session, startHost := hostwire.Route(args, os.Getenv)
	if !startHost {
		var ok bool
		if session, ok = hostwire.RouteIfRunning(args, os.Getenv); !ok {
			return execEngine(engine, args, "")
		}
	}
	ctx, interrupt := context.WithCancel(context.Background())
	go cancelOnSignal(ctx, interrupt)
	code, err := hostwire.Forward(ctx, args, session, engine, startHost, isTerminal(os.Stdout), isTerminal(os.Stderr), os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	interrupt()
	switch ge, gone := err.(*hostwire.GoneError); {
	case err == nil:
		return code
	case errors.Is(err, hostwire.ErrNoHost):
		return execEngine(engine, args, "")
	case gone:
		return execEngine(engine, args, hostwire.EnvFrontGone+"="+ge.Err.Error())
	case interrupted:
		return exitInterrupted // not taken by the host, and not to be run here either
	default:
		return execEngine(engine, args, hostwire.EnvFrontUnavailable+"="+err.Error())
	}
}

// cancelOnSignal cancels ctx on Ctrl-C or SIGTERM. It runs beside the
// exchange with the host: os/signal starts a thread of its own to catch
// signals, about 0.4 ms that would otherwise come before the request. A
// signal in the first moments of the process ends it as a signal does; the
// host then sees the CLI go away and cancels the command.
func cancelOnSignal(ctx context.Context, interrupt context.CancelFunc) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	select {
	case <-sigs:
		interrupt()
	case <-ctx.Done():
	}
}

// enginePath is dtb-engine next to this binary (symlinks resolved: the host
// names its build by the engine's real path). The kernel's name of the
// running program has no symlink left, so only the engine's own name is
// resolved, and only when it is one.
func enginePath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	engine := filepath.Join(filepath.Dir(exe), EngineName)
	st, err := os.Lstat(engine)
	if err == nil && st.Mode()&os.ModeSymlink != 0 {
		if engine, err = filepath.EvalSymlinks(engine); err == nil {
			st, err = os.Stat(engine)
		}
	}
	if err != nil {
		return "", err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable", engine)
	}
	return engine, nil
}

// failNoEngine prints the engine-missing error document (by hand: there is
// no engine to print through) and returns its exit code.
func failNoEngine(msg string) int {
	fmt.Fprintf(os.Stderr, `{"ok":false,"reason":"engine-missing","error":%s}`+"\n", strconv.Quote(msg))
	return 1
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
