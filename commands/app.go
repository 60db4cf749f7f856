// Package commands defines dtb's command tree: one file per subcommand, each parsing
// its flags and delegating to internal/. Nothing here prints or exits.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/hostwire"
	"github.com/dtb-cli/dtb/internal/output"
)

// Version is set at build time with -ldflags "-X github.com/dtb-cli/dtb/commands.Version=…".
var Version = ""

// Command categories, shown as groups in `dtb --help`.
const (
	catToolbar = "app toolbar (the app's own view)"
	catBrowser = "browser"
	catRelay   = "relay"
	catSetup   = "setup"
)

var registered []*cli.Command

// register adds a subcommand to the tree; each command file calls it from init.
func register(c *cli.Command) { registered = append(registered, c) }

// IO is the process's standard streams, injectable for tests.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// invocation is the per-run state shared by the command actions.
type invocation struct {
	io      IO
	printer *output.Printer
	getenv  func(string) string // the command's environment (the CLI's, also in the host)
}

const metaKey = "dtb.invocation"

// Main runs dtb with args (args[0] is the program name) and returns the exit code.
// Every deferred cleanup of a command has run when it returns.
func Main(args []string, streams IO) int {
	if len(args) > 1 && args[1] == hostwire.HostCommand {
		return serveHost(args[2:], streams)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if code, ok := viaHost(ctx, args, streams); ok {
		return code
	}
	return run(ctx, args, streams, os.Getenv)
}

func run(ctx context.Context, args []string, streams IO, getenv func(string) string) int {
	only := ""
	if len(args) > 1 {
		only = args[1]
	}
	app := appFor(only, !slices.ContainsFunc(args, isHelpOrCompletion))
	inv := &invocation{io: streams, printer: output.New(envOutputOptions(getenv), streams.Stdout, streams.Stderr), getenv: getenv}
	app.Metadata = map[string]any{metaKey: inv}
	app.Writer = streams.Stdout
	app.ErrWriter = streams.Stderr
	app.Reader = streams.Stdin

	normalized, err := normalizeArgs(app, args)
	if err == nil {
		onlyFlagsOf(app, normalized)
		err = app.RunContext(ctx, normalized)
	}
	if err == nil {
		return output.ExitOK
	}
	// The signal context ends only on Ctrl-C or SIGTERM: whatever the command
	// made of its cancelled context (a wait reports "timeout"), it was interrupted.
	if ctx.Err() != nil && !isReason(err, "interrupted") {
		err = output.Wrap("interrupted", err, "interrupted")
	}
	return inv.printer.Fail(err)
}

// onlyFlagsOf leaves out the flags of the top-level commands this run does not
// invoke (on copies: the registered commands are shared). urfave's App.Setup
// renders the help line of every categorized flag of every command, which costs
// more than a short browser command's own work. Help, --version and completion
// runs, and setup commands (completion reads the whole tree), keep everything.
func onlyFlagsOf(app *cli.App, args []string) {
	if len(args) < 2 {
		return
	}
	cmd := findCommand(app.Commands, args[1])
	if cmd == nil || cmd.Category == catSetup {
		return
	}
	for i, c := range app.Commands {
		if c != cmd {
			cp := *c
			cp.Flags = nil
			app.Commands[i] = &cp
		}
	}
}

func isReason(err error, reason string) bool {
	var e *output.Error
	return errors.As(err, &e) && e.Reason == reason
}

// envOutputOptions are the output options before flags are parsed, so that errors
// found while parsing follow NO_COLOR and DTB_JSON_ERRORS too.
func envOutputOptions(getenv func(string) string) output.Options {
	return output.Options{Color: getenv("DTB_COLOR"), JSONErrors: getenv("DTB_JSON_ERRORS") != "", NoColor: getenv("NO_COLOR") != ""}
}

// appFor is the command tree for a run of command only: newApp's, or the
// one the session host prepared for it (prepareApp).
func appFor(only string, plain bool) *cli.App {
	if plain {
		prepared.Lock()
		app := prepared.apps[only]
		delete(prepared.apps, only)
		prepared.Unlock()
		if app != nil {
			return app
		}
	}
	return newApp(only, plain)
}

// prepared keeps, by command name, a command tree the session host built
// and urfave set up after a run of that command, for its next run: building
// and setting up the tree took a third of a short command's time in the
// host before its first call to the browser, and the host does it while it
// waits. Each tree serves one run.
var prepared = struct {
	sync.Mutex
	apps map[string]*cli.App
}{apps: map[string]*cli.App{}}

// prepareApp builds and sets up the tree of a plain run of command only for
// the next run (appFor), unless one waits already.
func prepareApp(only string) {
	prepared.Lock()
	_, ok := prepared.apps[only]
	prepared.Unlock()
	if c := findCommand(registered, only); ok || c == nil || c.Category == catSetup {
		return // a typo or a setup command gets the whole tree: not kept
	}
	app := newApp(only, true)
	app.Setup()
	prepared.Lock()
	if _, ok := prepared.apps[only]; !ok && len(prepared.apps) < 64 {
		prepared.apps[only] = app
	}
	prepared.Unlock()
}

// NewApp builds the command tree.
func NewApp() *cli.App { return newApp("", false) }

// newApp builds the command tree for a run of the top-level command named
// only: that command is copied with its flags, the others are there by name
// without them (copying and preparing every command's flags costs more than
// a short browser command's own work, in the session host on every command).
// With "", a flag or a setup command (completion reads the whole tree) every
// command is complete. plain says the run shows no help or completion: the
// copied command's flags then answer urfave's name lookups quickly
// (withNamesOnce).
func newApp(only string, plain bool) *cli.App {
	// No -v alias: it collides with the verbose flags people expect.
	versionFlagOnce.Do(func() { cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"} })
	var target *cli.Command
	if only != "" && !strings.HasPrefix(only, "-") {
		if target = findCommand(registered, only); target != nil && target.Category == catSetup {
			target = nil
		}
	}
	// Copies: urfave marks flags as set while it parses, and the session host
	// runs several command lines at once.
	cmds := make([]*cli.Command, len(registered))
	for i, c := range registered {
		if target == nil || c == target {
			cmds[i] = cloneCommand(c)
			prepareCommand(cmds[i])
			if target != nil && plain {
				withNamesOnce(cmds[i])
			}
			continue
		}
		cp := *c
		cp.Flags = nil
		cmds[i] = &cp
	}
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	app := &cli.App{
		Name:                 "dtb",
		Usage:                "see and drive a web app through its dev toolbar and the browser, as JSON",
		UsageText:            "dtb [global options] COMMAND [options] [arguments]",
		Version:              versionString(),
		Commands:             cmds,
		EnableBashCompletion: true,
		HideHelpCommand:      false,
		Suggest:              true,
		Description: `Every command prints JSON on stdout (pretty on a terminal, one line otherwise) and
exits with a code that says what went wrong: 0 ok, 1 failed, 2 usage, 3 not found,
4 timeout, 5 not connected, 6 refused, 7 ambiguous, 130 interrupted. Errors are one JSON
document on stderr with a stable "reason". Every command takes --jq EXPR and --raw.

Examples:
  dtb state --jq '.extensions.flags.flags[] | {key, effective}'
  dtb run flags.set key=search.rank value=9 --jq .ok
  dtb open http://127.0.0.1:8080 && dtb screenshot --full -r --jq .path`,
		ExitErrHandler: func(*cli.Context, error) {}, // Main maps errors to exit codes
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return output.Usage("%v", err)
		},
		CommandNotFound: func(c *cli.Context, name string) {},
	}
	return app
}

// prepareCommand adds the shared flags and usage-error mapping to c and its children.
func prepareCommand(c *cli.Command) {
	c.Flags = dedupFlags(append(c.Flags, outputFlags()...))
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return output.Usage("%s: %v", c.Name, err)
	}
	for _, sub := range c.Subcommands {
		prepareCommand(sub)
	}
}

// dedupFlags keeps the first flag of each name, so a command can combine shared
// flag groups that overlap (its own --timeout wins over a group's).
func dedupFlags(flags []cli.Flag) []cli.Flag {
	seen := map[string]bool{}
	out := flags[:0:0]
	for _, f := range flags {
		name := flagName(f)
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, f)
	}
	return out
}

// flagName is a flag's first name. Names() runs a regexp per name in
// urfave/cli, on every flag of every command at each start: the types dtb
// uses are read directly.
func flagName(f cli.Flag) string {
	switch f := baseFlag(f).(type) {
	case *cli.BoolFlag:
		return f.Name
	case *cli.StringFlag:
		return f.Name
	case *cli.DurationFlag:
		return f.Name
	case *cli.IntFlag:
		return f.Name
	case *cli.StringSliceFlag:
		return f.Name
	}
	return f.Names()[0]
}

func versionString() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// action adapts a command's run function: the jq program is compiled before any
// work (a bad program is exit 2 and costs nothing), and the result is printed.
func action(runFn func(c *cli.Context, inv *invocation) (any, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		inv := c.App.Metadata[metaKey].(*invocation)
		opts, err := outputOptions(c)
		if err != nil {
			return err
		}
		opts.NoColor = inv.getenv("NO_COLOR") != ""
		inv.printer = output.New(opts, inv.io.Stdout, inv.io.Stderr)
		if err := inv.printer.Prepare(); err != nil {
			// "--jq -r EXPR" (jq's habit) gives --jq the program "-r".
			if name := strings.TrimLeft(opts.JQ, "-"); name != opts.JQ && c.Command != nil {
				if takesValue, ok := flagArity(c.Command.Flags)[name]; ok && !takesValue {
					if e, isErr := err.(*output.Error); isErr {
						e.Message += fmt.Sprintf("; %s is a flag: put it before --jq (%s --jq EXPR)", opts.JQ, opts.JQ)
					}
				}
			}
			return err
		}
		// The command's deadline (--timeout, where it has one) covers its
		// --jq program too: a program can loop forever.
		ctx, cancel := c.Context, context.CancelFunc(func() {})
		if d := c.Duration("timeout"); d > 0 {
			ctx, cancel = context.WithDeadline(c.Context, time.Now().Add(d))
		}
		defer cancel()
		res, err := runFn(c, inv)
		if err != nil {
			return err
		}
		if res == nil {
			return nil
		}
		return inv.printer.Result(ctx, res)
	}
}

// noArgs wraps the run function of a command that takes no positional arguments,
// so a stray word is a usage error instead of being silently ignored.
func noArgs(runFn func(c *cli.Context, inv *invocation) (any, error)) func(c *cli.Context, inv *invocation) (any, error) {
	return func(c *cli.Context, inv *invocation) (any, error) {
		if c.NArg() > 0 {
			return nil, output.Usage("%s takes no arguments, got %q (flags start with --)", c.Command.FullName(), c.Args().Slice())
		}
		return runFn(c, inv)
	}
}

// normalizeArgs lets flags stand anywhere: before the subcommand, between and after
// positional arguments. urfave/cli v2 stops at the first positional argument and
// knows app-level flags only before the subcommand, so dtb moves every flag right
// after the (sub)command path and puts positionals after a "--".
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	for _, a := range args[1:] {
		if a == "--generate-bash-completion" {
			return args, nil
		}
	}
	var flagsBefore []string
	rest := args[1:]
	// Flags typed before the subcommand. The arity table of every command's
	// flags costs a regexp per flag name inside urfave/cli (FlagNames), so it is
	// built only when a flag does come first: not on the hot path of a command.
	anyArity := map[string]bool{}
	if len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		for _, c := range app.Commands {
			for k, v := range flagArity(c.Flags) {
				anyArity[k] = anyArity[k] || v
			}
		}
	}
	i := leadingFlags(rest, anyArity)
	flagsBefore = append(flagsBefore, rest[:i]...)
	rest = rest[i:]
	if len(rest) == 0 {
		return args, nil // only app flags such as --help/--version
	}
	if rest[0] == "--" {
		rest = rest[1:]
		if len(rest) == 0 {
			return args, nil
		}
	}
	cmd := findCommand(app.Commands, rest[0])
	if cmd == nil {
		if rest[0] == "help" || rest[0] == "h" {
			// urfave answers an unknown help topic with nothing and exit 0.
			if len(rest) > 1 && !strings.HasPrefix(rest[1], "-") && findCommand(app.Commands, rest[1]) == nil {
				return nil, output.Usage("no help for %q: it is not a dtb command; run 'dtb --help' for the list", rest[1])
			}
			return args, nil
		}
		e := output.Usage("unknown command %q; run 'dtb --help' for the list", rest[0])
		if s := suggest(app.Commands, rest[0]); s != "" {
			e.Message += fmt.Sprintf(" (did you mean %q?)", s)
			e.With("suggestion", s)
		}
		return nil, e
	}
	path := []string{rest[0]}
	rest = rest[1:]
	// Descend into subcommands (e.g. "browser launch"), skipping interleaved flags.
	for len(cmd.Subcommands) > 0 {
		j := leadingFlags(rest, flagArity(cmd.Flags))
		if j >= len(rest) || rest[j] == "--" {
			break
		}
		sub := findCommand(cmd.Subcommands, rest[j])
		if sub == nil {
			if cmd.Action == nil && rest[j] != "help" && rest[j] != "h" {
				return nil, output.Usage("unknown command %q; run 'dtb %s --help' for the list", strings.Join(append(path, rest[j]), " "), strings.Join(path, " "))
			}
			break
		}
		flagsBefore = append(flagsBefore, rest[:j]...)
		path = append(path, rest[j])
		rest = rest[j+1:]
		cmd = sub
	}
	takesValue := flagArity(cmd.Flags)
	var flags, positionals []string
	pending := append(flagsBefore, rest...)
	for k := 0; k < len(pending); k++ {
		a := pending[k]
		if a == "--" {
			positionals = append(positionals, pending[k+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" || isNumber(a) {
			positionals = append(positionals, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && k+1 < len(pending) {
			flags = append(flags, pending[k+1])
			k++
		}
	}
	out := append([]string{args[0]}, path...)
	out = append(out, flags...)
	if len(positionals) > 0 {
		out = append(out, "--")
		out = append(out, positionals...)
	}
	return out, nil
}

// leadingFlags is how many of args are flags (with their values, by arity)
// before the first positional, "-" or "--".
func leadingFlags(args []string, takesValue map[string]bool) int {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		if name := strings.TrimLeft(args[i], "-"); !strings.Contains(name, "=") && takesValue[name] {
			i++ // the flag's value
		}
		i++
	}
	return min(i, len(args))
}

func isNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, r := range s[1:] {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagArity maps every flag name of a command to whether it consumes a value.
func flagArity(flags []cli.Flag) map[string]bool {
	m := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		_, isBool := baseFlag(f).(*cli.BoolFlag)
		for _, n := range f.Names() {
			m[n] = !isBool
		}
	}
	return m
}

func suggest(cmds []*cli.Command, name string) string {
	best, bestD := "", 3
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			if d := levenshtein(name, n); d < bestD {
				best, bestD = c.Name, d
			}
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
