package commands

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/host"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// hostCommand is the hidden argv[1] that makes a dtb process the session host.
const hostCommand = "__session-host"

var versionFlagOnce sync.Once

// cloneCommand copies c, its subcommands and its flags.
func cloneCommand(c *cli.Command) *cli.Command {
	cp := *c
	cp.Flags = make([]cli.Flag, len(c.Flags))
	for i, f := range c.Flags {
		cp.Flags[i] = cloneFlag(f)
	}
	if len(c.Subcommands) > 0 {
		cp.Subcommands = make([]*cli.Command, len(c.Subcommands))
		for i, s := range c.Subcommands {
			cp.Subcommands[i] = cloneCommand(s)
		}
	}
	return &cp
}

func cloneFlag(f cli.Flag) cli.Flag {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return f
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	return cp.Interface().(cli.Flag)
}

// buildID names this dtb build: a host of another one is replaced.
func buildID() string {
	exe, err := os.Executable()
	if err != nil {
		return versionString()
	}
	st, err := os.Stat(exe)
	if err != nil {
		return versionString() + "|" + exe
	}
	return fmt.Sprintf("%s|%s|%d|%d", versionString(), exe, st.Size(), st.ModTime().UnixNano())
}

// hostEnvVar turns the host off (DTB_HOST=off) and sets its idle limit
// (DTB_HOST_IDLE=DURATION).
const (
	hostEnvVar     = "DTB_HOST"
	hostIdleEnvVar = "DTB_HOST_IDLE"
)

// hostSkips are the browser commands that always attach directly: browser
// (launch, stop: stop also ends the host), status (shows the host), upload
// (its files are paths of the CLI's working directory).
var hostSkips = map[string]bool{"browser": true, "status": true, "upload": true}

// hostRoute says whether args go through the session host and, if so, of
// which session.
func hostRoute(args []string, getenv func(string) string) (session string, ok bool) {
	// A browser named with --cdp is the user's (or a remote service's): its
	// commands attach directly unless DTB_HOST=always asks the host to hold
	// that connection too (a remote browser then costs one round trip per
	// command instead of its handshakes).
	always := strings.EqualFold(getenv(hostEnvVar), "always")
	if len(args) < 2 || strings.EqualFold(getenv(hostEnvVar), "off") || (getenv("DTB_CDP") != "" && !always) || getenv("DTB_AUTO_CONNECT") != "" {
		return "", false
	}
	name := args[1]
	if strings.HasPrefix(name, "-") {
		return "", false
	}
	var cmd *cli.Command
	for _, c := range registered {
		if c.Name == name || contains(c.Aliases, name) {
			cmd = c
			break
		}
	}
	if cmd == nil || cmd.Category != catBrowser || hostSkips[cmd.Name] {
		return "", false
	}
	session = getenv("DTB_SESSION")
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		flagName, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			if a == "-" {
				return "", false // stdin
			}
			continue
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		switch flagName {
		case "h", "help", "stdin", "auto-connect":
			return "", false
		case "cdp":
			if !always {
				return "", false
			}
		case "session":
			session = val
		case "out", "o", "file", "f", "chrome":
			// Paths are the CLI's working directory's.
			if val != "" && !filepath.IsAbs(val) {
				return "", false
			}
		}
	}
	if cmd.Name == "eval" && !hasPositional(args[2:]) {
		return "", false // the expression comes from stdin
	}
	if session == "" {
		session = "default"
	}
	return session, true
}

func hasPositional(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// viaHost runs a browser command through the session host. ok is false when
// the command must run here: not a host command, or no host could take it
// (then a warning says why, and the command attaches directly).
func viaHost(ctx context.Context, args []string, streams IO) (int, bool) {
	if len(args) > 2 && args[1] == "browser" && args[2] == "stop" {
		stopHost(args, os.Getenv)
		return 0, false
	}
	session, ok := hostRoute(args, os.Getenv)
	if !ok || !validSession(session) {
		return 0, false
	}
	paths, err := host.PathsFor("", session)
	if err != nil {
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(exe, ".test") {
		return 0, false // a test binary running as dtb cannot be the host
	}
	start := []string{exe, hostCommand, "--session", session}
	if d := os.Getenv(hostIdleEnvVar); d != "" {
		start = append(start, "--idle", d)
	}
	cwd, _ := os.Getwd()
	req := &host.Request{
		Argv: absoluteAtFiles(args, cwd), Env: forwardedEnv(), Cwd: cwd,
		OutTTY: output.IsTerminal(streams.Stdout), ErrTTY: output.IsTerminal(streams.Stderr),
	}
	client := &host.Client{Paths: paths, Build: buildID(), Start: start, Env: hostEnv()}
	code, err := client.Run(ctx, req, streams.Stdout, streams.Stderr)
	if err == nil {
		return code, true
	}
	p := output.New(envOutputOptions(os.Getenv), streams.Stdout, streams.Stderr)
	if ge, isGone := err.(*host.GoneError); isGone {
		return p.Fail(output.Wrap("host-gone", ge.Err, "the session host went away while it ran the command; it had started, so its action may have run: check the page before repeating it").
			With("mayHaveRun", true)), true
	}
	p.Warn("host-unavailable", "the session host could not take the command ("+err.Error()+"); attached directly", map[string]any{"session": session})
	return 0, false
}

func validSession(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// stopHost ends the session's host before dtb browser stop ends its browser,
// so that nothing is left running.
func stopHost(args []string, getenv func(string) string) {
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
	if !validSession(session) {
		return
	}
	if paths, err := host.PathsFor("", session); err == nil {
		host.Quit(paths, 3*time.Second)
	}
}

// forwardedEnv is the part of the CLI's environment a command reads: the
// DTB_* settings and NO_COLOR.
func forwardedEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "DTB_") || k == "NO_COLOR" {
			env[k] = v
		}
	}
	return env
}

// hostEnv is the host's own environment: the CLI's without the settings that
// each request brings (they would otherwise apply to every later command),
// but with what places the session (state and cache folders).
func hostEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "DTB_") && k != "DTB_STATE_DIR" && k != "DTB_CACHE_DIR") || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// serveHost is the host process: dtb __session-host --session NAME [--idle D].
func serveHost(args []string, streams IO) int {
	fs := flag.NewFlagSet(hostCommand, flag.ContinueOnError)
	fs.SetOutput(streams.Stderr)
	session := fs.String("session", "default", "")
	idle := fs.Duration("idle", host.DefaultIdle, "")
	if err := fs.Parse(args); err != nil {
		return output.ExitUsage
	}
	err := host.Serve(host.Options{Session: *session, Build: buildID(), Idle: *idle, Run: hostRunner})
	if err != nil {
		fmt.Fprintln(streams.Stderr, "dtb session host:", err)
		return 1
	}
	return 0
}

// hostRunner runs one forwarded command line as the CLI would have: its
// environment comes from the request (flags read theirs through argv), its
// streams are relayed with the CLI's terminal status.
func hostRunner(ctx context.Context, req *host.Request, stdout, stderr io.Writer) (code int) {
	streams := IO{Stdin: strings.NewReader(""), Stdout: ttyWriter{stdout, req.OutTTY}, Stderr: ttyWriter{stderr, req.ErrTTY}}
	defer func() {
		if r := recover(); r != nil {
			p := output.New(envOutputOptions(req.Getenv), streams.Stdout, streams.Stderr)
			code = p.Fail(output.Errorf("failed", "dtb failed inside the session host: %v", r))
		}
	}()
	return run(ctx, withEnvFlags(req.Argv, req.Getenv), streams, req.Getenv)
}

type ttyWriter struct {
	io.Writer
	tty bool
}

func (w ttyWriter) IsTerminal() bool { return w.tty }

// withEnvFlags makes the environment variables of the command's flags
// explicit flags, as urfave would have read them from the process
// environment: urfave reads os.Getenv, which in the host is not the CLI's.
// A flag given on the command line wins, as with the environment.
func withEnvFlags(args []string, getenv func(string) string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	for _, c := range registered {
		if c.Name == args[1] || contains(c.Aliases, args[1]) {
			cmd = c
			break
		}
	}
	if cmd == nil {
		return args
	}
	flags := append(append([]cli.Flag(nil), cmd.Flags...), outputFlags()...)
	var extra []string
	for _, f := range flags {
		ef, ok := f.(interface{ GetEnvVars() []string })
		if !ok {
			continue
		}
		val := ""
		for _, e := range ef.GetEnvVars() {
			if v := getenv(e); v != "" {
				val = v
				break
			}
		}
		if val == "" || givenFlag(args[2:], f.Names()) {
			continue
		}
		if _, isBool := f.(*cli.BoolFlag); isBool {
			if _, err := strconv.ParseBool(val); err != nil {
				continue
			}
		}
		extra = append(extra, "--"+f.Names()[0]+"="+val)
	}
	if len(extra) == 0 {
		return args
	}
	out := append([]string{args[0], args[1]}, extra...)
	return append(out, args[2:]...)
}

func givenFlag(args []string, names []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if contains(names, n) {
			return true
		}
	}
	return false
}

// statusWithHost is dtb status with the session's host.
type statusWithHost struct {
	*session.StatusResult
	Host *host.Info `json:"host"`
}

func hostStatus(session string) *host.Info {
	paths, err := host.PathsFor("", session)
	if err != nil {
		return nil
	}
	return host.ReadInfo(paths)
}

// absoluteAtFiles makes a relative @FILE of --body (dtb route) and a
// relative --har FILE (dtb network) absolute: the host reads and writes
// from its own working directory, not the CLI's.
func absoluteAtFiles(args []string, cwd string) []string {
	out := append([]string(nil), args...)
	for i := 2; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--body" && i+1 < len(out):
			out[i+1] = absoluteAt(out[i+1], cwd)
			i++
		case strings.HasPrefix(a, "--body="):
			out[i] = "--body=" + absoluteAt(strings.TrimPrefix(a, "--body="), cwd)
		case a == "--har" && i+1 < len(out):
			out[i+1] = absolutePath(out[i+1], cwd)
			i++
		case strings.HasPrefix(a, "--har="):
			out[i] = "--har=" + absolutePath(strings.TrimPrefix(a, "--har="), cwd)
		}
	}
	return out
}

func absoluteAt(v, cwd string) string {
	if f, ok := strings.CutPrefix(v, "@"); ok {
		return "@" + absolutePath(f, cwd)
	}
	return v
}

func absolutePath(p, cwd string) string {
	if p != "" && !filepath.IsAbs(p) && cwd != "" {
		return filepath.Join(cwd, p)
	}
	return p
}
