package commands

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/host"
	"github.com/dtb-cli/dtb/internal/hostwire"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/session"
)

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
	return hostwire.BuildID(exe)
}

// viaHost runs a browser command through the session host. ok is false when
// the command must run here: not a host command, or no host could take it
// (then a warning says why, and the command attaches directly).
func viaHost(ctx context.Context, args []string, streams IO) (int, bool) {
	printer := func() *output.Printer { return output.New(envOutputOptions(os.Getenv), streams.Stdout, streams.Stderr) }
	// A command the front (cmd/dtb) hands over: the host could not take it,
	// or went away while it ran it.
	if why, handed := os.LookupEnv(hostwire.EnvFrontUnavailable); handed {
		os.Unsetenv(hostwire.EnvFrontUnavailable)
		session, browserCmd := hostwire.Route(args, os.Getenv)
		if !browserCmd {
			session, _ = hostwire.RouteIfRunning(args, os.Getenv)
		}
		warnHostUnavailable(printer(), why, session)
		return 0, false
	}
	if msg, handed := os.LookupEnv(hostwire.EnvFrontGone); handed {
		os.Unsetenv(hostwire.EnvFrontGone)
		return failHostGone(printer(), errors.New(msg)), true
	}
	if len(args) > 2 && args[1] == "browser" && args[2] == "stop" {
		hostwire.StopHost(args, os.Getenv)
		return 0, false
	}
	session, ok := hostwire.Route(args, os.Getenv)
	if !ok {
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(exe, ".test") {
		return 0, false // a test binary running as dtb cannot be the host
	}
	code, err := hostwire.Forward(ctx, args, session, exe, true, output.IsTerminal(streams.Stdout), output.IsTerminal(streams.Stderr), streams.Stdout, streams.Stderr)
	if err == nil {
		return code, true
	}
	if ge, isGone := err.(*hostwire.GoneError); isGone {
		return failHostGone(printer(), ge.Err), true
	}
	warnHostUnavailable(printer(), err.Error(), session)
	return 0, false
}

func failHostGone(p *output.Printer, err error) int {
	return p.Fail(output.Wrap("host-gone", err, "the session host went away while it ran the command; it had started, so its action may have run: check the page before repeating it").
		With("mayHaveRun", true))
}

func warnHostUnavailable(p *output.Printer, why, session string) {
	p.Warn("host-unavailable", "the session host could not take the command ("+why+"); dtb ran it itself", map[string]any{"session": session})
}

// serveHost is the host process: dtb __session-host --session NAME [--idle D].
func serveHost(args []string, streams IO) int {
	fs := flag.NewFlagSet(hostwire.HostCommand, flag.ContinueOnError)
	fs.SetOutput(streams.Stderr)
	session := fs.String("session", "default", "")
	idle := fs.Duration("idle", host.DefaultIdle, "")
	record := fs.Int("record-limit", pagedata.DefaultRecordLimit, "")
	if err := fs.Parse(args); err != nil {
		return output.ExitUsage
	}
	err := host.Serve(host.Options{Session: *session, Build: buildID(), Idle: *idle, RecordLimit: *record, Run: hostRunner})
	if err != nil {
		fmt.Fprintln(streams.Stderr, "dtb session host:", err)
		return 1
	}
	return 0
}

// hostRunner runs one forwarded command line as the CLI would have: its
// environment comes from the request (flags read theirs through argv), its
// streams are relayed with the CLI's terminal status.
func hostRunner(ctx context.Context, req *hostwire.Request, stdout, stderr io.Writer) (code int) {
	streams := IO{Stdin: strings.NewReader(""), Stdout: ttyWriter{stdout, req.OutTTY}, Stderr: ttyWriter{stderr, req.ErrTTY}}
	defer func() {
		if r := recover(); r != nil {
			p := output.New(envOutputOptions(req.Getenv), streams.Stdout, streams.Stderr)
			code = p.Fail(output.Errorf("failed", "dtb failed inside the session host: %v", r))
		}
	}()
	args := withEnvFlags(req.Argv, req.Getenv)
	defer func() {
		if len(args) > 1 {
			go prepareApp(args[1])
		}
	}()
	return run(ctx, args, streams, req.Getenv)
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
		if c.Name == args[1] || slices.Contains(c.Aliases, args[1]) {
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
		if slices.Contains(names, n) {
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
