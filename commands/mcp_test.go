package commands

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/mcpserver"
	"github.com/dtb-cli/dtb/internal/output"
)

// Every command of the CLI is a tool, its positional arguments read from its
// usage line; a command added later needs no MCP code.
func TestMCPToolsFromTheCommandTree(t *testing.T) {
	tools := map[string]mcpserver.Tool{}
	for _, tool := range mcpTools(NewApp().Commands) {
		tools[tool.Name] = tool
	}
	positionals := func(name string) []string {
		var out []string
		for _, p := range tools[name].Params {
			if p.Flag == "" {
				out = append(out, p.Name+":"+p.Type+map[bool]string{true: "!", false: ""}[p.Required])
			}
		}
		return out
	}
	cases := map[string][]string{
		"open":        {"url:string!"},
		"type":        {"selector:string", "text:string!"},
		"press":       {"selector:string", "key:string!"},
		"eval":        {"expr:string"}, // optional: eval --file F is another form
		"run":         {"id:string!", "input:object"},
		"select":      {"values:array!"},
		"upload":      {"files:array!"},
		"search":      {"queries:array!"},
		"screenshot":  {"locator:string"},
		"inspect":     nil,
		"drag":        {"source:string", "target:string"},
		"storage":     {"area:string!", "op:string", "key:string", "value:string"},
		"cookies_set": {"name:string!", "value:string!"},
		"cookies_get": {"name:string"},
		"console":     nil,
	}
	for name, want := range cases {
		if got := positionals(name); !slices.Equal(got, want) {
			t.Errorf("%s positionals = %v, want %v", name, got, want)
		}
	}
	// A command with subcommands is offered as its subcommands only.
	if _, ok := tools["cookies"]; ok {
		t.Errorf("cookies is a tool besides cookies_get")
	}
	if enum := tools["console"].Params; !slices.ContainsFunc(enum, func(p mcpserver.Param) bool { return p.Name == "fail_on" && len(p.Enum) == 4 }) {
		t.Errorf("console's fail_on has no enum: %+v", enum)
	}
	for _, c := range registered {
		if mcpHidden[c.Name] {
			continue
		}
		if _, ok := tools[c.Name]; !ok && len(c.Subcommands) == 0 {
			t.Errorf("command %s is no tool", c.Name)
		}
	}
}

func TestMCPArgv(t *testing.T) {
	var typeTool mcpserver.Tool
	for _, tool := range mcpTools(NewApp().Commands) {
		if tool.Name == "type" {
			typeTool = tool
		}
	}
	cases := []struct {
		args string
		want string // the command line, or the error's reason
	}{
		{`{"text":"--not-a-flag","selector":"#q","clear":true}`, "type --clear=true -- #q --not-a-flag"},
		{`{"text":"hi","timeout":"2s","jq":".ok"}`, "type --jq=.ok --timeout=2s -- hi"},
		{`{"text":5}`, "type -- 5"},
		{`{"selector":"#q"}`, "usage"},
		{`{"text":"x","clear":"yes"}`, "usage"},
		{`{"text":"x","nosuch":1}`, "usage"},
		{`{"text":["a","b"]}`, "usage"},
	}
	for _, c := range cases {
		var args map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		argv, err := mcpserver.ToolArgv(typeTool, args)
		got := strings.Join(argv, " ")
		if err != nil {
			got = output.AsError(err).Reason
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.args, got, c.want)
		}
	}
}
