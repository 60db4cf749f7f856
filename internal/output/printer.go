// Package output is the only writer of stdout and stderr: result documents as JSON
// (pretty on a TTY, compact otherwise), --jq through gojq, --raw, colour, warnings and
// the error document.
package output

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/fatih/color"
	"github.com/itchyny/gojq"
	"github.com/mattn/go-isatty"
)

// Options are the output flags shared by every command.
type Options struct {
	JQ         string            // --jq program; empty means identity
	Args       map[string]string // --arg name=value, visible as $name in the program
	Raw        bool              // --raw: strings without quotes
	Pretty     bool              // --pretty: force indentation
	Compact    bool              // --compact: force one line
	Color      string            // auto|always|never
	JSONErrors bool              // --json-errors: error document as JSON even on a TTY
	// MaxBytes is the ceiling on what a result prints (--max-bytes,
	// DTB_MAX_BYTES): 0 means DefaultMaxBytes, a negative value no ceiling.
	MaxBytes int64
	// NoColor: NO_COLOR is set in the environment of the command (which, in
	// the session host, is not the host's own).
	NoColor bool
}

// DefaultMaxBytes is the default ceiling on a printed result: 16 MiB.
const DefaultMaxBytes = 16 << 20

// TooLarge is the result-too-large error of a result of size bytes over max.
func TooLarge(size, max int64) *Error {
	return Errorf("result-too-large", "the result is %d bytes, over the limit of %d bytes (--max-bytes, DTB_MAX_BYTES)", size, max).With("bytes", size).With("maxBytes", max)
}

// MaxBytes is the ceiling on a printed result in bytes; 0 for none.
func (p *Printer) MaxBytes() int64 {
	switch {
	case p.opts.MaxBytes < 0:
		return 0
	case p.opts.MaxBytes == 0:
		return DefaultMaxBytes
	}
	return p.opts.MaxBytes
}

// Printer renders results, warnings and errors for one invocation.
type Printer struct {
	opts    Options
	stdout  io.Writer
	stderr  io.Writer
	outTTY  bool
	errTTY  bool
	code    *gojq.Code
	mu      sync.Mutex
	colors  palette
	errCols palette
}

type palette struct {
	enabled                           bool
	key, str, num, lit, punct, reason *color.Color
}

func newPalette(enabled bool) palette {
	mk := func(attrs ...color.Attribute) *color.Color {
		c := color.New(attrs...)
		// Decided per stream: color's global NoColor only looks at stdout.
		if enabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	return palette{
		enabled: enabled,
		key:     mk(color.FgBlue, color.Bold),
		str:     mk(color.FgGreen),
		num:     mk(color.FgCyan),
		lit:     mk(color.FgYellow),
		punct:   mk(color.Reset),
		reason:  mk(color.FgRed, color.Bold),
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	// A stream relayed from another process (the session host's client)
	// says what it is.
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// New makes a printer. It does not compile the jq program: call Prepare for that,
// before any work, so a bad program is a usage error that costs nothing.
func New(opts Options, stdout, stderr io.Writer) *Printer {
	p := &Printer{opts: opts, stdout: stdout, stderr: stderr, outTTY: IsTerminal(stdout), errTTY: IsTerminal(stderr)}
	p.colors = newPalette(p.colorFor(p.outTTY))
	p.errCols = newPalette(p.colorFor(p.errTTY))
	return p
}

func (p *Printer) colorFor(tty bool) bool {
	switch p.opts.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if p.opts.NoColor || os.Getenv("NO_COLOR") != "" { // no-color.org: present and not empty
		return false
	}
	return tty
}

// Prepare validates the output options and compiles the jq program.
func (p *Printer) Prepare() error {
	switch p.opts.Color {
	case "", "auto", "always", "never":
	default:
		return Usage("--color must be auto, always or never, not %q", p.opts.Color)
	}
	if p.opts.Pretty && p.opts.Compact {
		return Usage("--pretty and --compact exclude each other")
	}
	if p.opts.JQ == "" {
		return nil
	}
	code, err := CompileJQ(p.opts.JQ, p.opts.Args)
	if err != nil {
		return err
	}
	p.code = code
	return nil
}

// CompileJQ compiles a jq program with $name variables bound from args; a syntax or
// compile error is a usage error.
func CompileJQ(program string, args map[string]string) (*gojq.Code, error) {
	q, err := gojq.Parse(program)
	if err != nil {
		return nil, Usage("invalid jq program %q: %v", program, err)
	}
	names, _ := argNames(args)
	code, err := gojq.Compile(q, gojq.WithVariables(names))
	if err != nil {
		return nil, Usage("invalid jq program %q: %v", program, err)
	}
	return code, nil
}

func argNames(args map[string]string) ([]string, []any) {
	names := make([]string, 0, len(args))
	values := make([]any, 0, len(args))
	for _, k := range sortedKeys(args) {
		names = append(names, "$"+k)
		values = append(values, args[k])
	}
	return names, values
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Normalize round-trips v through JSON (numbers kept exact) so gojq sees only
// JSON types; gojq panics on Go types such as []map[string]any.
func Normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return fixNumbers(out), nil
}

// fixNumbers turns json.Number into int or float64, which gojq understands.
func fixNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return int(i)
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = fixNumbers(e)
		}
	}
	return v
}

// Truthy is jq truthiness: everything but false and null.
func Truthy(v any) bool { return v != nil && v != false }

// Text is a result printed verbatim, without JSON encoding or colour (a shell
// completion script, a document). Through --jq it is a JSON string like any other.
type Text string

// Result prints a command's result document, through --jq when given. What it
// would print is capped at MaxBytes: over it, nothing is printed and the
// error is result-too-large with the size. A value that is already JSON is
// measured before it is copied; the rendering stops at the first value that
// passes the ceiling, so a program that never stops emitting stops there. The
// program runs under ctx (the command's deadline and signals) and a memory budget.
func (p *Printer) Result(ctx context.Context, v any) error {
	max := p.MaxBytes()
	if t, ok := v.(Text); ok && p.code == nil {
		if max > 0 && int64(len(t)) > max {
			return TooLarge(int64(len(t)), max)
		}
		s := string(t)
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		_, err := io.WriteString(p.stdout, s)
		return err
	}
	if rm, ok := v.(json.RawMessage); ok && p.code == nil && max > 0 && int64(len(rm)) > max {
		return TooLarge(int64(len(rm)), max)
	}
	var buf bytes.Buffer
	render := func(o any) error {
		if s, ok := rawString(o); ok && p.opts.Raw {
			buf.WriteString(s)
			buf.WriteByte('\n')
		} else if err := p.encode(&buf, o, max); err != nil {
			if e, ok := err.(*Error); ok {
				return e
			}
			return Errorf("failed", "cannot encode result: %v", err)
		}
		if max > 0 && int64(buf.Len()) > max {
			return TooLarge(int64(buf.Len()), max)
		}
		return nil
	}
	var err error
	if p.code != nil {
		err = Each(ctx, p.code, v, p.opts.Args, jqMemoryBudget(max), render)
	} else {
		err = render(v)
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err = p.stdout.Write(buf.Bytes())
	return err
}

// rawString reports whether v is a string result, whether a Go string or a JSON
// document that is one (an eval result, say), so --raw treats both alike.
func rawString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.RawMessage:
		var s string
		if len(t) > 0 && t[0] == '"' && json.Unmarshal(t, &s) == nil {
			return s, true
		}
	}
	return "", false
}

func (p *Printer) pretty() bool {
	if p.opts.Pretty {
		return true
	}
	if p.opts.Compact {
		return false
	}
	return p.outTTY
}

// encode renders v into buf; an encoding over max bytes (0: no ceiling) stops
// there, before it is indented or coloured.
func (p *Printer) encode(buf *bytes.Buffer, v any, max int64) error {
	var raw []byte
	if rm, ok := v.(json.RawMessage); ok {
		raw = rm
	} else {
		b, err := marshalNoEscape(v)
		if err != nil {
			return err
		}
		raw = b
	}
	if max > 0 && int64(len(raw)) > max {
		return TooLarge(int64(len(raw)), max)
	}
	var out bytes.Buffer
	if p.pretty() {
		if err := json.Indent(&out, raw, "", "  "); err != nil {
			return err
		}
	} else if err := json.Compact(&out, raw); err != nil {
		return err
	}
	if p.colors.enabled {
		colorize(buf, out.Bytes(), p.colors)
	} else {
		buf.Write(out.Bytes())
	}
	buf.WriteByte('\n')
	return nil
}

// marshalNoEscape encodes without HTML escaping: results are read by people and
// jq, not embedded in HTML.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Warn writes a warning to stderr: a JSON line when stderr is not a terminal, a
// coloured line otherwise. Warnings never touch stdout.
func (p *Printer) Warn(reason, message string, details map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.errTTY && !p.opts.JSONErrors {
		fmt.Fprintf(p.stderr, "%s %s\n", p.errCols.lit.Sprint("warning:"), message)
		return
	}
	doc := map[string]any{"warning": reason, "message": message}
	for k, v := range details {
		doc[k] = v
	}
	b, _ := marshalNoEscape(doc)
	p.stderr.Write(append(b, '\n'))
}

// Logf writes a free-form log line to stderr (used by long-running commands).
func (p *Printer) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.stderr, strings.TrimRight(format, "\n")+"\n", args...)
}

// ErrorDocument is the JSON shape of a failure on stderr.
func ErrorDocument(e *Error) map[string]any {
	doc := map[string]any{}
	for k, v := range e.Details {
		doc[k] = v
	}
	doc["ok"] = false
	doc["reason"] = e.Reason
	doc["error"] = e.Message
	return doc
}

// Fail prints the error document for err on stderr and returns the exit code.
func (p *Printer) Fail(err error) int {
	e := AsError(err)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.errTTY && !p.opts.JSONErrors {
		fmt.Fprintf(p.stderr, "%s %s %s\n", p.errCols.reason.Sprint("error:"), e.Message, p.errCols.punct.Sprintf("(%s)", e.Reason))
		return e.ExitCode()
	}
	b, merr := marshalOrdered(ErrorDocument(e), []string{"ok", "reason", "error"})
	if merr != nil {
		b = []byte(fmt.Sprintf(`{"ok":false,"reason":%q,"error":%q}`, e.Reason, e.Message))
	}
	p.stderr.Write(append(b, '\n'))
	return e.ExitCode()
}

// marshalOrdered writes the listed keys first, then the rest sorted.
func marshalOrdered(m map[string]any, first []string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	seen := map[string]bool{}
	n := 0
	write := func(k string, v any) error {
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		kb, _ := marshalNoEscape(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := marshalNoEscape(v)
		if err != nil {
			return err
		}
		buf.Write(vb)
		return nil
	}
	for _, k := range first {
		if v, ok := m[k]; ok {
			seen[k] = true
			if err := write(k, v); err != nil {
				return nil, err
			}
		}
	}
	rest := map[string]string{}
	for k := range m {
		if !seen[k] {
			rest[k] = k
		}
	}
	for _, k := range sortedKeys(rest) {
		if err := write(k, m[k]); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
