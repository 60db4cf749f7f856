package hostwire

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dtb-cli/dtb/internal/userdirs"
)

// HostCommand is the hidden argv[1] that makes a dtb process the session host.
const HostCommand = "__session-host"

// EnvHost turns the host off (DTB_HOST=off) or on for --cdp browsers too
// (always); EnvHostIdle sets its idle limit (DTB_HOST_IDLE=DURATION) and
// EnvHostRecord how many requests and console messages it keeps per tab
// (DTB_HOST_RECORD=N). Both are read when a host starts.
const (
	EnvHost       = "DTB_HOST"
	EnvHostIdle   = "DTB_HOST_IDLE"
	EnvHostRecord = "DTB_HOST_RECORD"
)

// What the front (cmd/dtb) tells the engine it hands a command to: the host
// could not take it (the engine attaches directly and warns why), or the host
// went away while it ran it (the engine reports host-gone).
const (
	EnvFrontUnavailable = "DTB_FRONT_HOST_UNAVAILABLE"
	EnvFrontGone        = "DTB_FRONT_HOST_GONE"
)

// Commands are the browser commands that go through the session host. The
// others of the browser category attach directly: browser (launch, stop:
// stop also ends the host), status (shows the host), upload (its files are
// paths of the CLI's working directory). A test of package commands keeps
// this list equal to the registered commands.
var Commands = []string{
	"back", "check", "click", "close", "console", "cookies", "dialog", "drag",
	"eval", "extract", "forward", "hover", "inspect", "network", "open", "pdf",
	"press", "reload", "route", "screenshot", "scroll", "search", "select",
	"storage", "type", "uncheck", "unroute", "wait",
}

// ToolbarCommands are the toolbar commands, which go through the session's
// host only when one runs already (a relay answers them without a browser,
// and a host is not started for them): it spares the engine's start.
var ToolbarCommands = []string{"commands", "run", "state"}

// Route says whether args, a browser command, go through the session host
// (started on demand) and, if so, of which session.
func Route(args []string, getenv func(string) string) (session string, ok bool) {
	return route(args, getenv, Commands)
}

// RouteIfRunning says whether args, a toolbar command, go through the
// session's host if one runs, and of which session.
func RouteIfRunning(args []string, getenv func(string) string) (session string, ok bool) {
	return route(args, getenv, ToolbarCommands)
}

func route(args []string, getenv func(string) string, commands []string) (session string, ok bool) {
	// A browser named with --cdp is the user's (or a remote service's): its
	// commands attach directly unless DTB_HOST=always asks the host to hold
	// that connection too (a remote browser then costs one round trip per
	// command instead of its handshakes).
	always := strings.EqualFold(getenv(EnvHost), "always")
	if len(args) < 2 || strings.EqualFold(getenv(EnvHost), "off") || (getenv("DTB_CDP") != "" && !always) || getenv("DTB_AUTO_CONNECT") != "" {
		return "", false
	}
	if !slices.Contains(commands, args[1]) {
		return "", false
	}
	session = getenv("DTB_SESSION")
	positional := false
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = i+1 < len(args)
			break
		}
		flagName, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			positional = true
			continue
		}
		if a == "-" {
			return "", false // stdin
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		if pathFlags[flagName] == isPath && val == "-" {
			return "", false // stdin
		}
		switch flagName {
		case "h", "help", "stdin", "auto-connect", "generate-bash-completion":
			return "", false
		case "cdp":
			if !always {
				return "", false
			}
		case "session":
			session = val
		}
	}
	if args[1] == "eval" && !positional {
		return "", false // the expression comes from stdin
	}
	if session == "" {
		session = "default"
	}
	if !userdirs.ValidSessionName(session) {
		return "", false
	}
	return session, true
}

// BuildID names the dtb engine at path (size and time of the file): a host
// of another build is replaced.
func BuildID(engine string) string {
	st, err := os.Stat(engine)
	if err != nil {
		return engine
	}
	return fmt.Sprintf("%s|%d|%d", engine, st.Size(), st.ModTime().UnixNano())
}

// StartArgs is the command line of a new host of session run by engine.
func StartArgs(engine, session string, getenv func(string) string) []string {
	start := []string{engine, HostCommand, "--session", session}
	if d := getenv(EnvHostIdle); d != "" {
		start = append(start, "--idle", d)
	}
	if n := getenv(EnvHostRecord); n != "" {
		start = append(start, "--record-limit", n)
	}
	return start
}

// NewRequest is the request for args run in cwd with the CLI's environment
// environ; outTTY and errTTY say whether its streams are terminals.
func NewRequest(args []string, cwd string, environ []string, outTTY, errTTY bool) *Request {
	env := forwardedEnv(environ)
	for k, v := range env {
		if kind, ok := pathEnv[k]; ok {
			env[k] = absolute(kind, v, cwd)
		}
	}
	return &Request{Argv: absolutePaths(args, cwd), Env: env, Cwd: cwd, OutTTY: outTTY, ErrTTY: errTTY}
}

// forwardedEnv is the part of the CLI's environment a command reads: the
// DTB_* settings and NO_COLOR.
func forwardedEnv(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "DTB_") || k == "NO_COLOR") && k != EnvFrontUnavailable && k != EnvFrontGone {
			env[k] = v
		}
	}
	return env
}

// placeEnv are the variables that place the session's files: the host keeps
// them, made absolute (it works from /, the CLI from its own folder).
var placeEnv = map[string]bool{"DTB_STATE_DIR": true, "DTB_CACHE_DIR": true, "XDG_STATE_HOME": true}

// HostEnv is the host's own environment: the CLI's without the settings that
// each request brings (they would otherwise apply to every later command),
// but with what places the session (state and cache folders).
func HostEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if placeEnv[k] {
			if abs, err := filepath.Abs(v); err == nil && v != "" {
				kv = k + "=" + abs
			}
		} else if strings.HasPrefix(k, "DTB_") || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// StopHost ends the session's host of `dtb browser stop ARGS` before the
// browser is stopped, so that nothing is left running.
func StopHost(args []string, getenv func(string) string) {
	session := getenv("DTB_SESSION")
	for i := 3; i < len(args); i++ {
		if v, ok := strings.CutPrefix(args[i], "--session="); ok {
			session = v
		} else if args[i] == "--session" && i+1 < len(args) {
			session = args[i+1]
		}
	}
	if session == "" {
		session = "default"
	}
	if !userdirs.ValidSessionName(session) {
		return
	}
	if paths, err := PathsFor("", session); err == nil {
		Quit(paths, 3*time.Second)
	}
}

// How a flag or variable names a file: a path, a path after "@" (a value of
// dtb route --body is text or @FILE), or a program (a bare name is looked up
// on the PATH, a name with a slash is a path).
const (
	isPath = iota + 1
	isAtPath
	isProgram
)

// pathFlags are the flags of the host's commands whose values are files of
// the CLI's machine; pathEnv the variables that stand for such flags.
var (
	pathFlags = map[string]int{
		"out": isPath, "o": isPath, "file": isPath, "f": isPath, "har": isPath, "input-file": isPath,
		"user-data-dir": isPath, "cdp-ca": isPath, "body": isAtPath, "chrome": isProgram,
	}
	pathEnv = map[string]int{"DTB_USER_DATA_DIR": isPath, "DTB_CDP_CA": isPath, "DTB_CHROME": isProgram}
)

// absolutePaths makes the relative files that args name absolute: the host
// reads and writes from its own working directory, not the CLI's.
func absolutePaths(args []string, cwd string) []string {
	out := append([]string(nil), args...)
	for i := 2; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		kind, ok := pathFlags[name]
		switch {
		case !ok:
		case hasVal:
			out[i] = a[:len(a)-len(val)] + absolute(kind, val, cwd)
		case i+1 < len(out):
			out[i+1] = absolute(kind, out[i+1], cwd)
			i++
		}
	}
	return out
}

func absolute(kind int, v, cwd string) string {
	switch kind {
	case isAtPath:
		if f, ok := strings.CutPrefix(v, "@"); ok {
			return "@" + absolute(isPath, f, cwd)
		}
		return v
	case isProgram:
		if !strings.Contains(v, "/") {
			return v
		}
	}
	if v != "" && v != "-" && !filepath.IsAbs(v) && cwd != "" {
		return filepath.Join(cwd, v)
	}
	return v
}
