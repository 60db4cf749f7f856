package commands

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/mcpserver"
	"github.com/dtb-cli/dtb/internal/output"
)

func toolsByName(t *testing.T) map[string]mcpserver.Tool {
	t.Helper()
	tools := map[string]mcpserver.Tool{}
	for _, tool := range mcpTools(NewApp().Commands, 5*time.Second) {
		tools[tool.Name] = tool
	}
	return tools
}

// Every command of the CLI is a tool; its properties come from the flag
// definitions and the table of positional arguments, never from help text.
func TestMCPToolsFromTheCommandTree(t *testing.T) {
	tools := toolsByName(t)
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
		"eval":        {"expr:string!"},
		"run":         {"id:string!", "input:object"},
		"select":      {"selector:string", "values:array!"},
		"upload":      {"selector:string", "files:array!"},
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
	for _, c := range registered {
		if mcpHidden[c.Name] {
			continue
		}
		if _, ok := tools[c.Name]; !ok && len(c.Subcommands) == 0 {
			t.Errorf("command %s is no tool", c.Name)
		}
	}
}

// The schemas: no tool takes what the host decides (the browser program, the
// connection, the session, local files to read); fixed values are enums from
// the flag definitions; defaults are the flags' own; every tool has words,
// a title and hints; property names are unique.
func TestMCPSchemas(t *testing.T) {
	tools := toolsByName(t)
	param := func(tool, name string) *mcpserver.Param {
		for i, p := range tools[tool].Params {
			if p.Name == name {
				return &tools[tool].Params[i]
			}
		}
		return nil
	}
	forbidden := []string{"chrome", "cdp", "cdp_header", "auto_connect", "user_data_dir", "headed", "connect_timeout", "no_launch", "session", "relay", "file", "input_file", "stdin", "window_size", "viewport"}
	for name, tool := range tools {
		if _, ok := mcpInfos[name]; !ok {
			t.Errorf("%s has no entry in mcpInfos", name)
		}
		if tool.Title == "" || tool.Description == "" || len(tool.Description) > 120 {
			t.Errorf("%s: title %q, description %q", name, tool.Title, tool.Description)
		}
		seen := map[string]bool{}
		for _, p := range tool.Params {
			if slices.Contains(forbidden, p.Name) {
				t.Errorf("%s offers %s, which the host decides", name, p.Name)
			}
			if seen[p.Name] {
				t.Errorf("%s has two properties %s", name, p.Name)
			}
			seen[p.Name] = true
			if p.Description == "" {
				t.Errorf("%s.%s has no description", name, p.Name)
			}
			if strings.Contains(p.Description, "--") || strings.Contains(p.Description, "exit ") || strings.Contains(p.Description, "`") || cliPlaceholder(p.Description) {
				t.Errorf("%s.%s speaks CLI: %q", name, p.Name, p.Description)
			}
		}
	}
	for _, c := range []struct {
		tool, name string
		enum       []string
	}{
		{"click", "button", []string{"left", "right", "middle"}},
		{"screenshot", "format", []string{"jpeg", "png"}},
		{"console", "level", []string{"debug", "info", "warning", "error"}},
		{"open", "wait", []string{"load", "domcontentloaded", "none"}},
		{"dialog", "answer", []string{"accept", "dismiss"}},
		{"storage", "area", []string{"local", "session"}},
	} {
		if p := param(c.tool, c.name); p == nil || !slices.Equal(p.Enum, c.enum) {
			t.Errorf("%s.%s enum: %+v", c.tool, c.name, p)
		}
	}
	if p := param("click", "button"); p == nil || p.Default != "left" {
		t.Errorf("click.button default: %+v", p)
	}
	if p := param("click", "count"); p == nil || p.Default != 1 || p.Type != "integer" {
		t.Errorf("click.count: %+v", p)
	}
	if !slices.Equal(flagChoices["paper"], strings.Split(cdp.PaperNames(), ", ")) {
		t.Errorf("paper choices %v, pdf takes %s", flagChoices["paper"], cdp.PaperNames())
	}
	// Element lookups wait the server's short timeout; wait takes a longer one.
	if tools["click"].Defaults["timeout"] != "5s" || tools["hover"].Defaults["timeout"] != "5s" || param("click", "timeout") != nil {
		t.Errorf("click's timeout: %+v %v", param("click", "timeout"), tools["click"].Defaults)
	}
	if p := param("wait", "timeout"); p == nil || p.Default != "5s" {
		t.Errorf("wait.timeout: %+v", p)
	}
	if p := param("click", "has_text"); p == nil || param("type", "text").Flag != "" || param("type", "label") == nil {
		t.Errorf("type: text is what is typed, has_text the locator: %+v", tools["type"].Params)
	}
	if p := param("storage", "op"); p == nil || p.Default != "list" {
		t.Errorf("storage.op: %+v", p)
	}
	for name, want := range map[string][4]bool{ // read-only, destructive, idempotent, open world
		"inspect":    {true, false, true, true},
		"screenshot": {true, false, true, true},
		"status":     {true, false, true, false},
		"eval":       {false, true, false, true},
		"close":      {false, true, false, false},
		"click":      {false, false, false, true},
	} {
		tool := tools[name]
		if got := [4]bool{tool.ReadOnly, tool.Destructive, tool.Idempotent, tool.OpenWorld}; got != want {
			t.Errorf("%s hints %v, want %v", name, got, want)
		}
	}
	// What tools/list costs a host on every connection (142,405 bytes at
	// first, 22,524 before issue 21; Playwright MCP 20,331 for 25 tools).
	listed := mcpserver.Listed(mcpTools(NewApp().Commands, 5*time.Second))
	b, err := json.Marshal(map[string]any{"tools": listed})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools, %d bytes", len(tools), len(b))
	if len(b) > 16000 {
		t.Errorf("tools/list is %d bytes, over 16 KB", len(b))
	}
	for _, l := range listed {
		if l.Annotations == nil || l.Title == "" {
			t.Errorf("%s: annotations %v, title %q", l.Name, l.Annotations, l.Title)
		}
		if l.Annotations != nil && l.Annotations.ReadOnlyHint && l.Annotations.DestructiveHint != nil {
			t.Errorf("%s is read-only and says whether it is destructive", l.Name)
		}
		// The data tools declare their object results; eval's value is any JSON.
		if (l.OutputSchema != nil) != mcpDataTools[l.Name] || l.Name == "eval" && l.OutputSchema != nil {
			t.Errorf("%s: output schema %v", l.Name, l.OutputSchema)
		}
	}
}

// cliPlaceholder finds a CLI usage's placeholder word (PATTERN, EXPR) left in
// a description; acronyms are words.
func cliPlaceholder(s string) bool {
	for _, w := range regexp.MustCompile(`\b[A-Z]{2,}\b`).FindAllString(s, -1) {
		if !slices.Contains([]string{"URL", "URLs", "CSS", "ARIA", "PDF", "JSON", "ID"}, w) {
			return true
		}
	}
	return false
}

func TestMCPArgv(t *testing.T) {
	tools := toolsByName(t)
	cases := []struct {
		tool, args string
		want       string // the command line, or the error's reason
	}{
		{"type", `{"text":"--not-a-flag","selector":"#q","clear":true}`, "type --timeout=5s --clear=true -- #q --not-a-flag"},
		{"wait", `{"has_text":"Done","timeout":"20s"}`, "wait --text=Done --timeout=20s"},
		{"type", `{"text":"hi","timeout":"2s"}`, "usage"},
		{"inspect", `{"jq":"."}`, "inspect --jq=."},
		{"select", `{"selector":"@e4","values":["a","b"]}`, "select --timeout=5s -- @e4 a b"},
		{"type", `{"text":5}`, "type --timeout=5s -- 5"},
		{"type", `{"selector":"#q"}`, "usage"},
		{"type", `{"text":"x","clear":"yes"}`, "usage"},
		{"type", `{"text":"x","nosuch":1}`, "usage"},
		{"type", `{"text":["a","b"]}`, "usage"},
		{"type", `{"text":"x","chrome":"/bin/sh"}`, "usage"},
		{"open", `{"url":"example.com"}`, "open --current=true -- example.com"},
		{"open", `{"url":"example.com","new_tab":true}`, "open --current=false -- example.com"},
	}
	for _, c := range cases {
		var args map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		argv, err := mcpserver.ToolArgv(tools[c.tool], args)
		got := strings.Join(argv, " ")
		if err != nil {
			got = output.AsError(err).Reason
		}
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}
