package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/mcpserver"
	"github.com/dtb-cli/dtb/internal/output"
	dtbsession "github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "mcp",
		Category: catSetup,
		Usage:    "serve dtb's commands as Model Context Protocol tools over stdio, for agent hosts",
		UsageText: `dtb mcp [--session NAME] [--tools all|core] [--allow TOOL,…] [--deny TOOL,…] [--timeout D] [browser flags]
        [--allow-file-urls] [--output-dir DIR] [--upload-root DIR] [--keep-browser]

An MCP server on stdin/stdout. Each dtb command is a tool of the same name
(subcommands joined by "_": cookies_get); a failed call is a tool error carrying
the CLI's error document and its "reason". The host, not the model, decides how
the browser runs: --chrome, --cdp, --cdp-header, --auto-connect, --headed,
--no-launch, --user-data-dir, --viewport and --relay are flags (or DTB_*
variables) of this server and no tool takes them.

Each server has its own session (mcp-PID) unless --session names one; the
browser it launched is stopped when it exits (--keep-browser keeps it), and a
server that starts ends what killed servers left. Pages
are web pages: file:, chrome:, view-source: and javascript: URLs are refused
unless --allow-file-urls. Files a tool writes go to --output-dir (default the
session's folder in the cache), uploads come only from --upload-root (default
the working folder). Element lookups wait --timeout (default 5s); the wait
tool waits longer when a call says. --deny eval,upload,run switches those tools off; --allow offers
only the tools named.

Examples:
  dtb mcp
  dtb mcp --deny eval,upload,run --cdp 9222
  dtb mcp --session agent --allow open,inspect,click,type,extract,screenshot`,
		Flags:  append(mcpFlags(), mcpOwnedFlags()...),
		Action: action(noArgs(runMCP)),
	})
}

// mcpFlags are the server's own flags, then the flags it fixes for every
// tool (the same definitions the commands use, found in the command tree).
func mcpFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "the dtb session `NAME` the tools act in (default: mcp-PID, this server's own)", EnvVars: []string{"DTB_MCP_SESSION"}},
		&cli.StringSliceFlag{Name: "allow", Usage: "offer only the tools `TOOL,…`", EnvVars: []string{"DTB_MCP_ALLOW"}},
		&cli.StringFlag{Name: "tools", Value: "all", Usage: "`PROFILE`: all, or core (open, inspect, click, type, press, select, screenshot, extract, state, run) for hosts that want fewer", EnvVars: []string{"DTB_MCP_TOOLS"}},
		&cli.StringSliceFlag{Name: "deny", Usage: "never offer the tools `TOOL,…` (e.g. eval,upload,run)", EnvVars: []string{"DTB_MCP_DENY"}},
		&cli.DurationFlag{Name: "timeout", Value: 5 * time.Second, Usage: "how long element lookups wait (a wait call's timeout wins)", EnvVars: []string{"DTB_MCP_TIMEOUT"}},
		&cli.BoolFlag{Name: "allow-file-urls", Usage: "let tools open file:, chrome: and other local URLs (they can read local files)", EnvVars: []string{"DTB_MCP_ALLOW_FILE_URLS"}},
		&cli.StringFlag{Name: "output-dir", Usage: "the folder `DIR` every file a tool writes goes to (default: the session's folder under the cache)", EnvVars: []string{"DTB_MCP_OUTPUT_DIR"}},
		&cli.StringFlag{Name: "upload-root", Usage: "the folder `DIR` uploads may come from (default: the working folder)", EnvVars: []string{"DTB_MCP_UPLOAD_ROOT"}},
		&cli.BoolFlag{Name: "keep-browser", Usage: "leave the browser this server launched running when it exits", EnvVars: []string{"DTB_MCP_KEEP_BROWSER"}},
	}
}

// mcpOwnedFlags are the flags the host fixes for every tool, as the server's
// own: the same definitions the commands use (user-data-dir and window-size,
// flags of browser launch only, are set through DTB_USER_DATA_DIR and
// DTB_WINDOW_SIZE).
func mcpOwnedFlags() []cli.Flag {
	owned := map[string]bool{}
	for _, n := range mcpServerOwned {
		owned[n] = n != "session"
	}
	var out []cli.Flag
	for _, f := range append(browserFlags(), toolbarFlags()...) {
		if owned[flagName(f)] {
			out = append(out, f)
		}
	}
	return out
}

func runMCP(c *cli.Context, inv *invocation) (any, error) {
	// What the host set on the server becomes every call's setting, through
	// the variables the commands' own flags read; no tool can set it.
	for _, f := range mcpOwnedFlags() {
		name := flagName(f)
		env := flagEnv(f)
		if env == "" || !c.IsSet(name) {
			continue
		}
		val := c.String(name)
		switch f.(type) {
		case *cli.BoolFlag:
			val = fmt.Sprint(c.Bool(name))
		case *cli.DurationFlag:
			val = c.Duration(name).String()
		case *cli.StringSliceFlag:
			val = strings.Join(c.StringSlice(name), ",")
		}
		if err := os.Setenv(env, val); err != nil {
			return nil, output.Wrap("io-error", err, "setting "+env)
		}
	}
	session := c.String("session")
	own := session == ""
	if own {
		// Two hosts with default settings must not share pages or typing.
		session = fmt.Sprintf("mcp-%d", os.Getpid())
		// A server its host killed (SIGKILL) could not stop its browser:
		// what such servers left is ended now (a quick look when none did).
		rctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
		dtbsession.ReapOrphans(rctx, "", "mcp-")
		cancel()
	}
	if err := os.Setenv("DTB_SESSION", session); err != nil {
		return nil, output.Wrap("io-error", err, "setting the session")
	}
	opts := mcpserver.Options{
		Version:       versionString(),
		Run:           inProcessRunner(),
		RunTool:       "run",
		ListTool:      "commands",
		MaxImageBytes: 8 << 20,
		AllowFileURLs: c.Bool("allow-file-urls"),
		OutputDir:     c.String("output-dir"),
		UploadRoot:    c.String("upload-root"),
		Instructions: "dtb drives a browser (open, inspect, click, type, extract, screenshot …) and a web app's dev toolbar (state, commands, run). " +
			"inspect lists elements with refs (e1 …): pass them to other tools as \"@e1\". Results are JSON; a failed call's JSON has a stable \"reason\". " +
			"jq filters a result to what you need. Element tools wait a few seconds for their element: call wait first for a slower one.",
	}
	if opts.OutputDir == "" {
		cache, err := dtbsession.CacheDir()
		if err != nil {
			return nil, err
		}
		opts.OutputDir = filepath.Join(cache, "mcp", session)
	}
	if opts.UploadRoot == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, output.Wrap("io-error", err, "the working folder")
		}
		opts.UploadRoot = wd
	}
	allow := splitList(c.StringSlice("allow"))
	switch profile := c.String("tools"); profile {
	case "", "all":
	case "core":
		if len(allow) > 0 {
			return nil, output.Usage("--tools core and --allow both choose the tools; give one")
		}
		allow = mcpCoreTools
	default:
		return nil, output.Usage("--tools is all or core, not %q", profile)
	}
	tools, err := mcpserver.Selected(mcpTools(c.App.Commands, c.Duration("timeout")), allow, splitList(c.StringSlice("deny")))
	if err != nil {
		return nil, err
	}
	in := inv.io.Stdin
	if in == nil {
		in = os.Stdin
	}
	// A browser already up in a named session is someone else's to stop.
	hadBrowser := !own && sessionHasBrowser(opts.Run)
	err = mcpserver.Serve(c.Context, readCloser{in}, writeCloser{inv.io.Stdout}, tools, opts)
	if !c.Bool("keep-browser") && !hadBrowser {
		// The server's own browser ends with it; a browser it attached to
		// (--cdp) is only let go. Bounded: a host waits a short grace.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		opts.Run(ctx, []string{"browser", "stop", "--json-errors"})
		if own {
			// Nobody uses this server's session again: its files go too.
			if s, err := dtbsession.Open(ctx, dtbsession.Config{Session: session}); err == nil {
				s.Forget()
				s.Close()
			}
		}
		cancel()
	}
	if err != nil && c.Context.Err() == nil {
		return nil, output.Wrap("io-error", err, "the MCP connection")
	}
	return nil, nil
}

// sessionHasBrowser reports whether the session records a live browser.
func sessionHasBrowser(run mcpserver.Runner) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o := run(ctx, []string{"status", "--no-launch", "--compact", "--json-errors", "--jq", ".browser.pid // empty"})
	return o.Code == 0 && len(bytes.TrimSpace(o.Stdout)) > 0
}

func flagEnv(f cli.Flag) string {
	switch f := f.(type) {
	case *cli.StringFlag:
		return first(f.EnvVars)
	case *cli.BoolFlag:
		return first(f.EnvVars)
	case *cli.DurationFlag:
		return first(f.EnvVars)
	case *cli.StringSliceFlag:
		return first(f.EnvVars)
	}
	return ""
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// prepareFlags are c's flags with the shared output flags, as the CLI gives them.
func prepareFlags(c *cli.Command) []cli.Flag {
	return dedupFlags(append(append([]cli.Flag(nil), c.Flags...), outputFlags()...))
}

func flagType(f cli.Flag) string {
	switch f.(type) {
	case *cli.BoolFlag:
		return "boolean"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "integer"
	case *cli.Float64Flag:
		return "number"
	case *cli.StringSliceFlag, *cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.Float64SliceFlag:
		return "array"
	default:
		return "string" // strings, durations ("5s"), generic values
	}
}

// mcpName is a flag or argument name as a property name: letters, digits and "_".
func mcpName(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		default:
			return '_'
		}
	}, s), "_")
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// inProcessRunner runs a command line through the CLI's own entry point, with
// buffers for streams: the tool and the command are the same code. A browser
// tool goes through the session's host, as the CLI's commands do, so that
// what the host keeps between commands (a dialog left open, the network and
// console record, routes) holds between tool calls too; when no host can
// take it, it runs here.
func inProcessRunner() mcpserver.Runner {
	var mu sync.Mutex // the command tree is shared state: one run at a time
	return func(ctx context.Context, argv []string) mcpserver.Outcome {
		mu.Lock()
		defer mu.Unlock()
		var stdout, stderr bytes.Buffer
		streams := IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		args := append([]string{"dtb"}, argv...)
		code, hosted := viaHost(ctx, args, streams)
		if !hosted {
			code = run(ctx, args, streams, os.Getenv)
		}
		return mcpserver.Outcome{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Code: code}
	}
}

type readCloser struct {
	r interface{ Read([]byte) (int, error) }
}

func (r readCloser) Read(p []byte) (int, error) { return r.r.Read(p) }
func (readCloser) Close() error                 { return nil }

type writeCloser struct {
	w interface{ Write([]byte) (int, error) }
}

func (w writeCloser) Write(p []byte) (int, error) { return w.w.Write(p) }
func (writeCloser) Close() error                  { return nil }
