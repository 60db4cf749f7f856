// Package mcpserver serves dtb's commands as Model Context Protocol tools over
// stdio. It knows nothing of the CLI library: commands/ describes each command as a
// Tool (built from the same definitions the CLI parses) and hands over a Runner that
// runs one command line in process. So every command, and every flag added later,
// is a tool without a second implementation.
package mcpserver

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dtb-cli/dtb/internal/toolbar"
)

// Tool is one dtb command as an MCP tool.
type Tool struct {
	Name        string   // MCP tool name: the command path joined by "_" ("browser_launch")
	Command     []string // the CLI path ("browser", "launch")
	Title       string
	Description string
	Params      []Param // flags, then positionals in command-line order
	Image       bool    // the result names an image file (.path, .format) to return as image content
	// OutputSchema: the tool declares that its results are JSON objects, and
	// every call returns structured content (see structured).
	OutputSchema bool
	// Hints are the tool's annotations for hosts that approve calls by kind.
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Defaults are flags added to every call that does not set them (the short
	// MCP timeout of element lookups).
	Defaults map[string]string
	// Fallback are the reasons for which a call that failed with Defaults
	// applied runs again without them (open reuses the session's tab, or opens
	// one when there is none).
	Fallback []string
}

// Param kinds that the server checks before a call.
const (
	KindURL    = "url"    // a URL the browser navigates to
	KindPath   = "path"   // a file the command writes
	KindUpload = "upload" // a file the command reads and hands to the page
)

// Param is one input property of a tool: a flag or a positional argument.
type Param struct {
	Name        string // property name
	Flag        string // the CLI flag's name; empty for a positional
	Type        string // "string", "boolean", "integer", "number", "array" (of strings) or "object" (passed as one JSON word)
	Enum        []string
	Description string
	Required    bool
	Default     any
	Kind        string // KindURL, KindPath, KindUpload or empty
	Invert      bool   // a boolean that sets its flag to the opposite (new_tab: --current=false)
}

// sdkTool is t as the SDK lists it.
func (t Tool) sdkTool(schema map[string]any) *mcp.Tool {
	// Hints at their protocol defaults are left out, as tools/list is read
	// by every host on every connection: destructiveHint means nothing for a
	// read-only tool, and openWorldHint is true unless said.
	a := &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly, IdempotentHint: t.Idempotent}
	if !t.ReadOnly {
		a.DestructiveHint = &t.Destructive
	}
	if !t.OpenWorld {
		a.OpenWorldHint = &t.OpenWorld
	}
	out := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema, Annotations: a}
	if t.OutputSchema {
		// Permissive on purpose: results grow fields, and a jq filter's
		// value that is no object comes as {"result": value}.
		out.OutputSchema = objectSchema
	}
	return out
}

var objectSchema = map[string]any{"type": "object"}

// inputSchema is the JSON Schema (2020-12) of a tool's arguments.
func (t Tool) inputSchema() map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range t.Params {
		s := map[string]any{"type": p.Type}
		if p.Type == "array" {
			s["items"] = map[string]any{"type": "string"}
		}
		if len(p.Enum) > 0 {
			s["enum"] = p.Enum
		}
		if p.Description != "" {
			s["description"] = p.Description
		}
		if p.Default != nil {
			s["default"] = p.Default
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
	}
	// No additionalProperties: an unknown argument is refused by argv with words.
	schema := map[string]any{"type": "object"}
	if len(props) > 0 {
		schema["properties"] = props
	}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema
}

// runInputSchema refines the `run` tool's schema with the commands the toolbar
// declares: the id becomes an enum, and each command's input fields become the
// input's schema when that id is chosen.
func runInputSchema(base map[string]any, cmds []toolbar.Command) map[string]any {
	if len(cmds) == 0 {
		return base
	}
	props := map[string]any{}
	old, _ := base["properties"].(map[string]any)
	for k, v := range old {
		props[k] = v
	}
	schema := map[string]any{}
	for k, v := range base {
		schema[k] = v
	}
	schema["properties"] = props
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].ID < cmds[j].ID })
	ids := make([]string, 0, len(cmds))
	var lines []string
	var branches []any
	for _, c := range cmds {
		ids = append(ids, c.ID)
		line := c.ID
		if c.Description != "" {
			line += ": " + c.Description
		} else if c.Label != "" {
			line += ": " + c.Label
		}
		lines = append(lines, line)
		if c.Input == nil || len(c.Input.Fields) == 0 {
			continue
		}
		branches = append(branches, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"id": map[string]any{"const": c.ID}}, "required": []string{"id"}},
			"then": map[string]any{"properties": map[string]any{"input": fieldsSchema(c.Input.Fields)}},
		})
	}
	id := map[string]any{"type": "string", "enum": ids, "description": "the toolbar command to run:\n" + strings.Join(lines, "\n")}
	props["id"] = id
	if len(branches) > 0 {
		schema["allOf"] = branches
	}
	return schema
}

// fieldsSchema turns the toolbar's flat input description into JSON Schema.
func fieldsSchema(fields map[string]toolbar.Field) map[string]any {
	props := map[string]any{}
	var required []string
	for name, f := range fields {
		s := map[string]any{}
		var types []string
		for _, t := range f.Types() {
			if t == "enum" {
				s["enum"] = f.Values
				continue
			}
			types = append(types, t)
		}
		switch len(types) {
		case 0:
		case 1:
			s["type"] = types[0]
		default:
			s["type"] = types
		}
		if f.Description != "" {
			s["description"] = f.Description
		}
		if f.Default != nil {
			s["default"] = f.Default
		}
		props[name] = s
		if f.Required {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// ToolArgv is t.argv, for tests of the command tree's tools.
func ToolArgv(t Tool, args map[string]json.RawMessage) ([]string, error) { return t.argv(args) }

// argv turns a tool call's arguments into a dtb command line (without the program
// name), flags first and positionals after "--", so no value is read as a flag.
func (t Tool) argv(args map[string]json.RawMessage) ([]string, error) {
	return t.argvWith(args, true)
}

func (t Tool) argvWith(args map[string]json.RawMessage, defaults bool) ([]string, error) {
	known := map[string]Param{}
	for _, p := range t.Params {
		known[p.Name] = p
	}
	var names []string
	for name := range args {
		if _, ok := known[name]; !ok {
			return nil, usageError("unknown argument %q of tool %s", name, t.Name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	out := append([]string(nil), t.Command...)
	for _, name := range sortedKeys(t.Defaults) {
		if _, given := args[mcpPropName(t, name)]; !given && defaults {
			out = append(out, "--"+name+"="+t.Defaults[name])
		}
	}
	for _, name := range names {
		p := known[name]
		if p.Flag == "" {
			continue
		}
		vals, err := values(p, args[name])
		if err != nil {
			return nil, err
		}
		if p.Type == "boolean" {
			v := vals[0]
			if p.Invert {
				v = map[string]string{"true": "false", "false": "true"}[v]
			}
			out = append(out, "--"+p.Flag+"="+v)
			continue
		}
		for _, v := range vals {
			out = append(out, "--"+p.Flag+"="+v)
		}
	}
	var positionals []string
	for _, p := range t.Params {
		if p.Flag != "" {
			continue
		}
		raw, ok := args[p.Name]
		if !ok {
			if p.Required {
				return nil, usageError("tool %s needs %q", t.Name, p.Name)
			}
			continue
		}
		vals, err := values(p, raw)
		if err != nil {
			return nil, err
		}
		positionals = append(positionals, vals...)
	}
	if len(positionals) > 0 {
		out = append(out, "--")
		out = append(out, positionals...)
	}
	return out, nil
}

// values reads one argument as the command-line words it stands for. Scalars are
// accepted loosely (a number for a string flag, "true" for a boolean): models do that.
func values(p Param, raw json.RawMessage) ([]string, error) {
	if p.Type == "object" {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, usageError("argument %q must be a JSON object", p.Name)
		}
		return []string{string(raw)}, nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, usageError("argument %q is not JSON: %v", p.Name, err)
	}
	if list, ok := v.([]any); ok {
		if p.Type != "array" {
			return nil, usageError("argument %q takes one %s, not a list", p.Name, p.Type)
		}
		out := make([]string, 0, len(list))
		for _, item := range list {
			s, err := scalar(p, item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalar(p, v)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func scalar(p Param, v any) (string, error) {
	switch x := v.(type) {
	case string:
		if p.Type == "boolean" && x != "true" && x != "false" {
			return "", usageError("argument %q is a boolean, got %q", p.Name, x)
		}
		return x, nil
	case json.Number:
		if p.Type == "boolean" {
			return "", usageError("argument %q is a boolean, got %s", p.Name, x)
		}
		return x.String(), nil
	case bool:
		if p.Type != "boolean" && p.Type != "string" {
			return "", usageError("argument %q is a %s, got %v", p.Name, p.Type, x)
		}
		if x {
			return "true", nil
		}
		return "false", nil
	case nil:
		return "", usageError("argument %q is null; leave it out instead", p.Name)
	default:
		return "", usageError("argument %q must be a %s", p.Name, p.Type)
	}
}

// mcpPropName is the property of t that sets the flag, or the flag's name.
func mcpPropName(t Tool, flag string) string {
	for _, p := range t.Params {
		if p.Flag == flag {
			return p.Name
		}
	}
	return flag
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Listed is every tool as tools/list describes it, for tests and measurements.
func Listed(tools []Tool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.sdkTool(t.inputSchema()))
	}
	return out
}
