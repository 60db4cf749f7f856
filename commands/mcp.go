package commands

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/mcpserver"
	"github.com/dtb-cli/dtb/internal/output"
)

func init() {
	register(&cli.Command{
		Name:     "mcp",
		Category: catSetup,
		Usage:    "serve every dtb command as a Model Context Protocol tool over stdio, for agent hosts",
		UsageText: `dtb mcp [--session NAME] [--allow TOOL,…] [--deny TOOL,…]

An MCP server on stdin/stdout. Each dtb command is a tool of the same name
(subcommands joined by "_": browser_launch), its flags and arguments the tool's
input properties, its result the JSON document the CLI prints; a failed call is a
tool error carrying the CLI's error document and its "reason". Every tool takes
jq. screenshot also returns the image itself. The tools use the dtb session
--session (default "mcp"): follow or continue from a shell with
'dtb status --session mcp'. --deny eval,upload,run switches those tools off;
--allow offers only the tools named. run's input schema lists the toolbar's
commands when a page is connected at start, and again after each commands call.

Examples:
  dtb mcp
  dtb mcp --deny eval,upload,run
  dtb mcp --session agent --allow open,inspect,click,type,extract,screenshot`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Value: "mcp", Usage: "the dtb session `NAME` the tools act in", EnvVars: []string{"DTB_SESSION"}},
			&cli.StringSliceFlag{Name: "allow", Usage: "offer only the tools `TOOL,…`", EnvVars: []string{"DTB_MCP_ALLOW"}},
			&cli.StringSliceFlag{Name: "deny", Usage: "never offer the tools `TOOL,…` (e.g. eval,upload,run)", EnvVars: []string{"DTB_MCP_DENY"}},
		},
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			tools, err := mcpserver.Selected(mcpTools(c.App.Commands), splitList(c.StringSlice("allow")), splitList(c.StringSlice("deny")))
			if err != nil {
				return nil, err
			}
			// The tools' own --session flags read DTB_SESSION: the server's session
			// becomes every call's default.
			if err := os.Setenv("DTB_SESSION", c.String("session")); err != nil {
				return nil, output.Wrap("io-error", err, "setting the session")
			}
			in := inv.io.Stdin
			if in == nil {
				in = os.Stdin
			}
			err = mcpserver.Serve(c.Context, readCloser{in}, writeCloser{inv.io.Stdout}, tools, mcpserver.Options{
				Version:       versionString(),
				Run:           inProcessRunner(),
				RunTool:       "run",
				ListTool:      "commands",
				MaxImageBytes: 8 << 20,
			})
			if err != nil && c.Context.Err() == nil {
				return nil, output.Wrap("io-error", err, "the MCP connection")
			}
			return nil, nil
		})),
	})
}

// mcpHidden are the commands that are no tools: the server itself, the long-running
// relay server and shell set-up.
var mcpHidden = map[string]bool{"mcp": true, "relay": true, "completion": true, "help": true}

// mcpServerFlags are flags the server decides for every call, or that shape the
// CLI's printing, which the server fixes.
var mcpServerFlags = map[string]bool{"help": true, "session": true, "pretty": true, "compact": true, "color": true, "json-errors": true}

// mcpImageTools return their captured file as image content too.
var mcpImageTools = map[string]bool{"screenshot": true}

// mcpTools describes every command of the tree as a tool, from the same
// definitions the CLI parses: names, usage, flags and the usage line's arguments.
func mcpTools(cmds []*cli.Command) []mcpserver.Tool {
	var tools []mcpserver.Tool
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || mcpHidden[c.Name] {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			// A command with subcommands is offered as its subcommands: its
			// own bare form (cookies) is a shorthand of one of them (cookies get).
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
				continue
			}
			tools = append(tools, mcpTool(p, c))
		}
	}
	walk(nil, cmds)
	return tools
}

func mcpTool(path []string, c *cli.Command) mcpserver.Tool {
	usage, alternatives := firstUsageForm(c.UsageText)
	enums := usageEnums(usage)
	t := mcpserver.Tool{
		Name:        strings.Join(path, "_"),
		Command:     path,
		Description: c.Usage,
		Image:       mcpImageTools[c.Name],
	}
	if c.UsageText != "" {
		t.Description += "\n\n" + c.UsageText
	}
	for _, f := range prepareFlags(c) {
		name := f.Names()[0]
		if mcpServerFlags[name] {
			continue
		}
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		p := mcpserver.Param{Name: mcpName(name), Flag: name, Type: flagType(f), Enum: enums[name]}
		if d, ok := f.(cli.DocGenerationFlag); ok {
			p.Description = strings.ReplaceAll(d.GetUsage(), "`", "")
			if d.TakesValue() {
				if def := d.GetDefaultText(); def != "" && def != `""` {
					p.Description += " (default " + def + ")"
				}
			}
		}
		t.Params = append(t.Params, p)
	}
	for _, p := range usagePositionals(usage, path) {
		// With other forms of the command (eval --file F), no argument is required.
		p.Required = p.Required && !alternatives
		t.Params = append(t.Params, p)
	}
	return t
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

// firstUsageForm is the first form of a usage text: its first line, up to an
// alternative form ("dtb eval EXPR | dtb eval --file F").
func firstUsageForm(usage string) (form string, alternatives bool) {
	line, _, _ := strings.Cut(usage, "\n")
	form, _, alternatives = strings.Cut(line, " | dtb ")
	return form, alternatives
}

// usageEnumRE finds "--flag a|b|c" in a usage line: a flag whose value is one of
// fixed lower-case words.
var usageEnumRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`--([a-z][a-z0-9-]*)[ =]([a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)+)`)
})

func usageEnums(usage string) map[string][]string {
	out := map[string][]string{}
	for _, m := range usageEnumRE().FindAllStringSubmatch(usage, -1) {
		out[m[1]] = strings.Split(m[2], "|")
	}
	return out
}

// usagePositionals reads the positional arguments of a usage line: upper-case
// words outside flags, optional inside brackets, repeated when they end in "…".
// "SELECTOR|@eN" is one argument named after its first form; a JSON argument is
// an object property named input.
func usagePositionals(usage string, path []string) []mcpserver.Param {
	words := strings.Fields(usage)
	// Skip "dtb" and the command path.
	if len(words) > len(path) {
		words = words[len(path)+1:]
	} else {
		words = nil
	}
	var out []mcpserver.Param
	depth := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		opens := strings.Count(w, "[")
		closes := strings.Count(w, "]")
		optional := depth+opens > 0
		depth += opens - closes
		bare := strings.Trim(w, "[]")
		if strings.HasPrefix(bare, "-") {
			// A flag's value word is not an argument.
			if !strings.Contains(bare, "=") && i+1 < len(words) && !strings.HasPrefix(strings.Trim(words[i+1], "[]"), "-") && !strings.HasPrefix(words[i+1], "[") {
				next := words[i+1]
				depth += strings.Count(next, "[") - strings.Count(next, "]")
				i++
			}
			continue
		}
		first, _, _ := strings.Cut(bare, "|")
		repeated := strings.HasSuffix(first, "…") || strings.HasSuffix(first, "...")
		first = strings.TrimSuffix(strings.TrimSuffix(first, "…"), "...")
		if first == "" || strings.ToUpper(first) != first || strings.ToLower(first) == first {
			continue // "locator flags", "key=value", "|", "-"
		}
		p := mcpserver.Param{Name: mcpName(first), Type: "string", Required: !optional, Description: "argument " + bare}
		if repeated {
			p.Type = "array"
			p.Name = plural(p.Name)
		}
		if first == "JSON" {
			p.Name, p.Type, p.Description = "input", "object", "the command's input"
		}
		out = append(out, p)
	}
	return out
}

func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "s"):
		return s
	case strings.HasSuffix(s, "y"):
		return strings.TrimSuffix(s, "y") + "ies"
	default:
		return s + "s"
	}
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
// buffers for streams: the tool and the command are the same code.
func inProcessRunner() mcpserver.Runner {
	var mu sync.Mutex // the command tree is shared state: one run at a time
	return func(ctx context.Context, argv []string) mcpserver.Outcome {
		mu.Lock()
		defer mu.Unlock()
		var stdout, stderr bytes.Buffer
		code := run(ctx, append([]string{"dtb"}, argv...), IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, os.Getenv)
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
