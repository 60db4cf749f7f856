package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

// Outcome is what one command line did: its stdout, stderr and exit code.
type Outcome struct {
	Stdout, Stderr []byte
	Code           int
}

// Runner runs one dtb command line (without the program name) and reports what
// it printed. commands/ provides it: the very code path of the CLI.
type Runner func(ctx context.Context, argv []string) Outcome

// Options configure a server.
type Options struct {
	Version string
	Allow   []string // tool names to offer; empty offers all
	Deny    []string // tool names never offered (wins over Allow)
	Run     Runner
	// RunTool is the name of the tool whose input schema is refined with the
	// toolbar's declared commands, and ListTool the tool whose result lists them.
	RunTool, ListTool string
	// MaxImageBytes caps an image returned as content (the file stays on disk).
	MaxImageBytes int
	// AllowFileURLs lets URL arguments name local schemes (file:, chrome: …);
	// without it only http, https, data: and about:blank are taken.
	AllowFileURLs bool
	// OutputDir is the one folder tools write files into: a path argument is
	// taken relative to it and refused outside it. Empty: no path arguments.
	OutputDir string
	// UploadRoot is the one folder uploads come from.
	UploadRoot string
	// Instructions is the server's description for the host.
	Instructions string
}

// Selected applies the allow and deny lists to tools; a name in either list that
// is no tool is a usage error, so a typo cannot leave a tool switched on.
func Selected(tools []Tool, allow, deny []string) ([]Tool, error) {
	byName := map[string]bool{}
	var names []string
	for _, t := range tools {
		byName[t.Name] = true
		names = append(names, t.Name)
	}
	for _, list := range [][]string{allow, deny} {
		for _, n := range list {
			if !byName[n] {
				return nil, output.Usage("%q is not a tool; tools: %s", n, strings.Join(names, ", "))
			}
		}
	}
	allowed := func(n string) bool {
		for _, d := range deny {
			if d == n {
				return false
			}
		}
		if len(allow) == 0 {
			return true
		}
		for _, a := range allow {
			if a == n {
				return true
			}
		}
		return false
	}
	var out []Tool
	for _, t := range tools {
		if allowed(t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// server is one MCP server over dtb's tools.
type server struct {
	opts  Options
	sdk   *mcp.Server
	tools map[string]Tool
	// calls run one at a time: a command line is a whole dtb run, and two at once
	// would race for the session's current tab the way two shells would.
	calls sync.Mutex
	// base ends with the server (SIGTERM, SIGINT): it cancels the running call,
	// which the SDK's request context does not see.
	base context.Context
}

// Serve answers MCP requests on in/out until the client closes the stream or ctx
// ends.
func Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser, tools []Tool, opts Options) error {
	s := &server{opts: opts, tools: map[string]Tool{}, base: ctx}
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: "dtb", Version: opts.Version}, &mcp.ServerOptions{Instructions: opts.Instructions})
	for _, t := range tools {
		s.tools[t.Name] = t
		s.add(t, t.inputSchema())
	}
	if _, ok := s.tools[opts.RunTool]; ok {
		if _, ok := s.tools[opts.ListTool]; ok {
			go s.learnToolbarCommands(ctx)
		}
	}
	err := s.sdk.Run(ctx, &lineTransport{in: in, out: out})
	if ctx.Err() != nil {
		return nil // SIGTERM or SIGINT: the way a host stops a server
	}
	return err
}

func (s *server) add(t Tool, schema map[string]any) {
	s.sdk.AddTool(t.sdkTool(schema), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.base, cancel)
		defer stop()
		return s.call(ctx, t, req.Params.Arguments), nil
	})
}

// learnToolbarCommands asks the toolbar for its commands once at start, briefly,
// so the run tool's schema names them when a page is already connected.
func (s *server) learnToolbarCommands(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s.calls.Lock()
	o := s.opts.Run(ctx, []string{s.opts.ListTool, "--compact", "--color=never", "--json-errors", "--timeout=2s"})
	s.calls.Unlock()
	if o.Code == 0 {
		s.refineRun(o.Stdout)
	}
}

// refineRun gives the run tool the schema of the commands in a `commands` result.
func (s *server) refineRun(doc []byte) {
	var res struct {
		Commands []toolbar.Command `json:"commands"`
	}
	if json.Unmarshal(doc, &res) != nil || len(res.Commands) == 0 {
		return
	}
	t := s.tools[s.opts.RunTool]
	s.add(t, runInputSchema(t.inputSchema(), res.Commands))
}

// call runs one tool call. Every failure, a bad argument included, is a tool
// result with isError and the CLI's error document, so the model can read it.
func (s *server) call(ctx context.Context, t Tool, raw json.RawMessage) *mcp.CallToolResult {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return errorResult(output.Usage("the arguments of %s are not a JSON object: %v", t.Name, err))
		}
	}
	// An image tool runs without its jq program: the image needs the whole result,
	// and the program is applied to it afterwards, as the CLI would.
	var jq jqRequest
	if t.Image {
		jq = takeJQ(args)
	}
	if err := s.guard(t, args); err != nil {
		return errorResult(err)
	}
	argv, err := t.argv(args)
	if err != nil {
		return errorResult(err)
	}
	s.calls.Lock()
	o := s.opts.Run(ctx, withPrinting(t, argv))
	if o.Code != 0 && len(t.Fallback) > 0 && ctx.Err() == nil && slices.Contains(t.Fallback, errorReason(o.Stderr)) {
		if plain, err := t.argvWith(args, false); err == nil {
			o = s.opts.Run(ctx, withPrinting(t, plain))
		}
	}
	s.calls.Unlock()
	if o.Code != 0 {
		return failedResult(o)
	}
	if t.Name == s.opts.ListTool && !hasJQ(args) {
		s.refineRun(o.Stdout)
	}
	if !t.Image {
		return okResult(t, o.Stdout, o.Stderr)
	}
	return s.imageResult(ctx, t, o, jq)
}

type jqRequest struct {
	program string
	args    map[string]string
	raw     bool
}

func takeJQ(args map[string]json.RawMessage) jqRequest {
	var r jqRequest
	if v, ok := args["jq"]; ok {
		_ = json.Unmarshal(v, &r.program)
		delete(args, "jq")
	}
	if v, ok := args["raw"]; ok {
		_ = json.Unmarshal(v, &r.raw)
		delete(args, "raw")
	}
	if v, ok := args["arg"]; ok {
		var pairs []string
		if json.Unmarshal(v, &pairs) != nil {
			var one string
			_ = json.Unmarshal(v, &one)
			pairs = []string{one}
		}
		r.args = map[string]string{}
		for _, p := range pairs {
			if k, val, ok := strings.Cut(p, "="); ok {
				r.args[k] = val
			}
		}
		delete(args, "arg")
	}
	return r
}

func hasJQ(args map[string]json.RawMessage) bool {
	_, ok := args["jq"]
	return ok
}

// imageResult returns the captured image as image content beside the result.
func (s *server) imageResult(ctx context.Context, t Tool, o Outcome, jq jqRequest) *mcp.CallToolResult {
	var shot struct {
		Path   string `json:"path"`
		Format string `json:"format"`
	}
	_ = json.Unmarshal(o.Stdout, &shot)
	text := o.Stdout
	if jq.program != "" {
		var out, errb bytes.Buffer
		p := output.New(output.Options{JQ: jq.program, Args: jq.args, Raw: jq.raw, Compact: true, Color: "never", JSONErrors: true}, &out, &errb)
		err := p.Prepare()
		if err == nil {
			var doc any
			if err = json.Unmarshal(o.Stdout, &doc); err == nil {
				err = p.Result(ctx, doc)
			}
		}
		if err != nil {
			return errorResult(err)
		}
		text = out.Bytes()
	}
	res := okResult(t, text, o.Stderr)
	if shot.Path == "" {
		return res
	}
	data, err := os.ReadFile(filepath.Clean(shot.Path))
	if err != nil {
		res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("the image at %s could not be read: %v", shot.Path, err)})
		return res
	}
	if s.opts.MaxImageBytes > 0 && len(data) > s.opts.MaxImageBytes {
		res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("the image (%d bytes) is over the %d-byte cap for image content: lower max_side or quality", len(data), s.opts.MaxImageBytes)})
		return res
	}
	mime := "image/jpeg"
	if shot.Format == "png" {
		mime = "image/png"
	}
	res.Content = append(res.Content, &mcp.ImageContent{Data: data, MIMEType: mime})
	return res
}

func okResult(t Tool, stdout, stderr []byte) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimRight(string(stdout), "\n")}}}
	if sc := structured(t, stdout); sc != nil {
		res.StructuredContent = sc
	}
	if w := strings.TrimSpace(string(stderr)); w != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: "warnings:\n" + w})
	}
	return res
}

// structured is a result as structured content, beside the same document as
// text (MCP 2025-06-18). A JSON object is itself. Anything else (a jq filter's
// value, several values, text) is none, unless the tool declares an output
// schema: a client then requires structured content on every call (the
// TypeScript SDK refuses a result without it), so the values are wrapped as
// {"result": value} or {"results": [values]}, and text as {"result": text}.
func structured(t Tool, stdout []byte) any {
	var vals []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(stdout))
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			vals = nil
			break
		}
		vals = append(vals, v)
	}
	if len(vals) == 1 && vals[0][0] == '{' {
		return vals[0]
	}
	if !t.OutputSchema {
		return nil
	}
	switch {
	case len(vals) == 1:
		return map[string]any{"result": vals[0]}
	case len(vals) > 1:
		return map[string]any{"results": vals}
	}
	return map[string]any{"result": strings.TrimRight(string(stdout), "\n")}
}

// failedResult is a failed command's error document, as the CLI printed it.
func failedResult(o Outcome) *mcp.CallToolResult {
	text := strings.TrimSpace(string(o.Stderr))
	if text == "" {
		text = fmt.Sprintf(`{"ok":false,"reason":"failed","error":"the command exited %d without an error document"}`, o.Code)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// errorResult renders err through the same output path as the CLI's errors.
func errorResult(err error) *mcp.CallToolResult {
	var errb bytes.Buffer
	code := output.New(output.Options{Color: "never", JSONErrors: true}, io.Discard, &errb).Fail(err)
	return failedResult(Outcome{Stderr: errb.Bytes(), Code: code})
}

func usageError(format string, args ...any) error { return output.Usage(format, args...) }

// withPrinting adds the printing the server reads to a command line.
func withPrinting(t Tool, argv []string) []string {
	return append(argv[:len(t.Command):len(t.Command)], append([]string{"--compact", "--color=never", "--json-errors"}, argv[len(t.Command):]...)...)
}

// errorReason is the reason of a failed command's error document.
func errorReason(stderr []byte) string {
	var doc struct {
		Reason string `json:"reason"`
	}
	lines := bytes.Split(bytes.TrimSpace(stderr), []byte("\n"))
	_ = json.Unmarshal(lines[len(lines)-1], &doc)
	return doc.Reason
}
