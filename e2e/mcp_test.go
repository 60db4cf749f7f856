package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession starts the built `dtb mcp` as a subprocess (the session's browser,
// the shared relay's page) and connects the SDK's own client to it over stdio.
func mcpSession(t *testing.T, extra ...string) *mcp.ClientSession {
	t.Helper()
	return mcpSessionNamed(t, "e2e", extra...)
}

// mcpSessionNamed is mcpSession in the dtb session named.
func mcpSessionNamed(t *testing.T, session string, extra ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(cli.Bin, append([]string{"mcp", "--session", session}, extra...)...)
	cmd.Env = cli.Environ()
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "dtb-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to dtb mcp: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		// Close ends stdin, waits for the server to exit, and signals it if it
		// does not: the process is stopped by its PID either way.
		if err := cs.Close(); err != nil {
			t.Logf("closing dtb mcp: %v", err)
		}
		if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("dtb mcp stderr:\n%s", stderr.String())
		}
	})
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// toolText is the result's first text content: the JSON document dtb printed.
func toolText(t *testing.T, name string, res *mcp.CallToolResult) string {
	t.Helper()
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	t.Fatalf("%s: no text content in %+v", name, res)
	return ""
}

func toolOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	text := toolText(t, name, res)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", name, args, text)
	}
	return text
}

func TestMCPTools(t *testing.T) {
	needBrowser(t)
	cs := mcpSession(t, "--relay", shared.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	for _, want := range []string{"open", "inspect", "click", "type", "eval", "state", "commands", "run", "screenshot", "extract", "wait", "dialog"} {
		if tools[want] == nil {
			t.Fatalf("no tool %q among %d tools", want, len(list.Tools))
		}
	}
	// The page-data commands of issue 13; cookies is offered as its subcommands.
	for _, want := range []string{"console", "network", "back", "forward", "reload", "cookies_get", "cookies_set", "cookies_clear", "storage", "pdf", "drag"} {
		if tools[want] == nil {
			t.Errorf("no tool %q", want)
		}
	}
	for _, absent := range []string{"mcp", "relay", "completion", "cookies"} {
		if tools[absent] != nil {
			t.Errorf("tool %q should not be offered", absent)
		}
	}
	props := func(tool string) map[string]any {
		s, _ := tools[tool].InputSchema.(map[string]any)
		p, _ := s["properties"].(map[string]any)
		return p
	}
	required := func(tool string) []any {
		s, _ := tools[tool].InputSchema.(map[string]any)
		r, _ := s["required"].([]any)
		return r
	}
	for _, tool := range []string{"inspect", "state", "screenshot", "run"} {
		if props(tool)["jq"] == nil {
			t.Errorf("%s has no jq argument: %v", tool, props(tool))
		}
		if props(tool)["session"] != nil {
			t.Errorf("%s offers session, which the server decides", tool)
		}
	}
	if got := get(props("click"), "selector", "type"); got != "string" {
		t.Errorf("click.selector type = %v", got)
	}
	if props("click")["chrome"] != nil || props("open")["cdp"] != nil {
		t.Errorf("the model may choose the browser program or connection")
	}
	if got := get(props("click"), "count", "type"); got != "integer" {
		t.Errorf("click.count type = %v", got)
	}
	if got := get(props("click"), "force", "type"); got != "boolean" {
		t.Errorf("click.force type = %v", got)
	}
	if got, _ := get(props("screenshot"), "format", "enum").([]any); !slices.Equal(got, []any{"jpeg", "png"}) {
		t.Errorf("screenshot.format enum = %v", got)
	}
	if get(props("state"), "reporter", "type") != "string" || props("state")["via"] != nil {
		t.Errorf("state's properties: %v", props("state"))
	}
	if !slices.Contains(required("open"), any("url")) || !slices.Contains(required("run"), any("id")) {
		t.Errorf("required: open %v, run %v", required("open"), required("run"))
	}
	if got, _ := get(props("console"), "level", "enum").([]any); !slices.Equal(got, []any{"debug", "info", "warning", "error"}) {
		t.Errorf("console.level enum = %v", got)
	}
	if get(props("drag"), "target", "type") != "string" || get(props("drag"), "source", "type") != "string" {
		t.Errorf("drag's properties: %v", props("drag"))
	}
	if !slices.Contains(required("cookies_set"), any("value")) || !slices.Contains(required("storage"), any("area")) {
		t.Errorf("required: cookies_set %v, storage %v", required("cookies_set"), required("storage"))
	}
	// dtb dialog: the answer is an optional argument, --text a string; the
	// page commands carry the dialog policy.
	if get(props("dialog"), "answer", "type") != "string" || get(props("dialog"), "text", "type") != "string" || slices.Contains(required("dialog"), any("answer")) {
		t.Errorf("dialog's properties: %v, required %v", props("dialog"), required("dialog"))
	}
	for _, tool := range []string{"click", "eval", "type", "press"} {
		if get(props(tool), "dialog", "type") != "string" {
			t.Errorf("%s has no dialog argument: %v", tool, props(tool))
		}
	}
	if got := get(props("run"), "input", "type"); got != "object" {
		t.Errorf("run.input type = %v", got)
	}

	rid := reporterID("mcp")
	tab, _ := get(callTool(t, cs, "open", map[string]any{"url": shared.page("reporterId=" + rid)}).StructuredContent, "tab", "id").(string)
	if tab == "" {
		t.Fatal("open returned no tab id")
	}
	t.Cleanup(func() { dtb(t, "close", "--session", "e2e", "--tab", tab).OK(t) })
	// The page records its own clicks; the button is found through inspect's ref.
	toolOK(t, cs, "eval", map[string]any{"expr": `document.body.insertAdjacentHTML('beforeend', '<button id="mcp-press" onclick="window.mcpClicks = (window.mcpClicks || 0) + 1">Press for MCP</button>'), true`})
	lines := toolOK(t, cs, "inspect", map[string]any{"jq": `.elements[] | select(test("Press for MCP"))`})
	ref := regexp.MustCompile(`^e\d+`).FindString(strings.Trim(strings.TrimSpace(lines), `"`))
	if ref == "" {
		t.Fatalf("inspect did not list the button: %q", lines)
	}
	toolOK(t, cs, "click", map[string]any{"selector": "@" + ref})
	if got := toolOK(t, cs, "eval", map[string]any{"expr": "window.mcpClicks"}); strings.TrimSpace(got) != "1" {
		t.Errorf("the page counted %s clicks, want 1", got)
	}

	// A dialog answered through the tool's dialog argument; the page records
	// what confirm returned.
	toolOK(t, cs, "eval", map[string]any{"expr": "window.mcpConfirm = confirm('From MCP'), 1", "dialog": "accept"})
	if got := toolOK(t, cs, "eval", map[string]any{"expr": "window.mcpConfirm"}); strings.TrimSpace(got) != "true" {
		t.Errorf("confirm answered through MCP returned %s in the page", got)
	}
	if got := toolOK(t, cs, "dialog", nil); !strings.Contains(got, `"open":false`) {
		t.Errorf("dialog tool: %s", got)
	}
	// A dialog one call leaves open is answered by a later one: the tools go
	// through the session host, which stays connected between calls.
	toolOK(t, cs, "eval", map[string]any{"expr": `document.body.insertAdjacentHTML('beforeend', '<button id="mcp-del" onclick="window.mcpLater = confirm(\'Later from MCP\')">Delete for MCP</button>'), true`})
	if got := toolOK(t, cs, "click", map[string]any{"selector": "#mcp-del"}); !strings.Contains(got, `"open":true`) {
		t.Fatalf("the click's confirm is not left open: %s", got)
	}
	if got := toolOK(t, cs, "dialog", map[string]any{"answer": "accept"}); !strings.Contains(got, `"answered":"accept"`) {
		t.Fatalf("dialog accept: %s", got)
	}
	if got := toolOK(t, cs, "eval", map[string]any{"expr": "window.mcpLater"}); strings.TrimSpace(got) != "true" {
		t.Errorf("the confirm answered by a later call returned %s in the page", got)
	}

	// Storage set through a tool is in the page's own storage.
	toolOK(t, cs, "storage", map[string]any{"area": "session", "op": "set", "key": "mcp.key", "value": "set by a tool"})
	if got := toolOK(t, cs, "eval", map[string]any{"expr": "sessionStorage.getItem('mcp.key')"}); strings.TrimSpace(got) != `"set by a tool"` {
		t.Errorf("the page's sessionStorage holds %s", got)
	}

	// The toolbar through the relay.
	waitConnected(t, shared.URL, rid)
	state := toolOK(t, cs, "state", map[string]any{"reporter": rid, "jq": ".connection.connected"})
	if strings.TrimSpace(state) != "true" {
		t.Errorf("state through the relay: %s", state)
	}

	// After a commands call, run's schema names the toolbar's commands and inputs.
	toolOK(t, cs, "commands", map[string]any{"reporter": rid})
	list, err = cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "run" {
			continue
		}
		s, _ := tool.InputSchema.(map[string]any)
		ids, _ := get(s, "properties", "id", "enum").([]any)
		if !slices.Contains(ids, any("flags.set")) {
			t.Errorf("run's id enum after commands: %v", ids)
		}
		if !strings.Contains(mustJSON(t, s["allOf"]), `"key"`) {
			t.Errorf("run's schema has no input fields of flags.set: %v", s["allOf"])
		}
	}
	out := toolOK(t, cs, "run", map[string]any{"id": "flags.set", "input": map[string]any{"key": "search.rank", "value": 9}, "reporter": rid, "jq": ".ok"})
	if strings.TrimSpace(out) != "true" {
		t.Errorf("run flags.set: %s", out)
	}

	// A screenshot is image content the model can see, beside the result.
	res := callTool(t, cs, "screenshot", map[string]any{"jq": ".format"})
	if res.IsError {
		t.Fatalf("screenshot: %s", toolText(t, "screenshot", res))
	}
	if got := toolText(t, "screenshot", res); got != `"jpeg"` {
		t.Errorf("screenshot --jq .format -r printed %q", got)
	}
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil || img.MIMEType != "image/jpeg" || !bytes.HasPrefix(img.Data, []byte{0xFF, 0xD8, 0xFF}) {
		t.Fatalf("screenshot returned no JPEG image content: %+v", res.Content)
	}

	// annotate draws the refs on the image and lists them; no overlay stays.
	res = callTool(t, cs, "screenshot", map[string]any{"annotate": true, "jq": "[.annotations[].ref]"})
	var refs []string
	if res.IsError || json.Unmarshal([]byte(toolText(t, "screenshot", res)), &refs) != nil || len(refs) == 0 || refs[0] != "e1" || len(res.Content) < 2 {
		t.Fatalf("annotated screenshot: %s (%d contents)", toolText(t, "screenshot", res), len(res.Content))
	}
	if got := toolOK(t, cs, "eval", map[string]any{"expr": "document.querySelectorAll('dtb-annotations').length"}); strings.TrimSpace(got) != "0" {
		t.Errorf("annotation overlay left in the page: %s", got)
	}

	// A bad locator is a tool error with the CLI's reason.
	bad := callTool(t, cs, "click", map[string]any{"selector": "#no-such-element-anywhere"})
	if !bad.IsError {
		t.Fatalf("click on a missing element succeeded: %s", toolText(t, "click", bad))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(toolText(t, "click", bad)), &doc); err != nil || doc["reason"] != "no-match" {
		t.Errorf("click on a missing element: %s", toolText(t, "click", bad))
	}
	// So is an argument the tool does not have, with the usage reason.
	unknown := callTool(t, cs, "click", map[string]any{"selctor": "#x"})
	if !unknown.IsError || !strings.Contains(toolText(t, "click", unknown), `"reason":"usage"`) {
		t.Errorf("an unknown argument: %s", toolText(t, "click", unknown))
	}

	// The agent's tab is in the session a human can follow from the shell.
	r := dtb(t, "status", "--session", "e2e", "--jq", ".currentTab.url")
	if !strings.Contains(r.Stdout, rid) {
		t.Errorf("dtb status --session e2e does not show the agent's tab: %s", r)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMCPDeny(t *testing.T) {
	needBrowser(t)
	cs := mcpSession(t, "--deny", "eval,upload,run")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "eval" || tool.Name == "upload" || tool.Name == "run" {
			t.Errorf("denied tool %q is offered", tool.Name)
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "eval", Arguments: map[string]any{"expr": "1"}}); err == nil {
		t.Error("calling a denied tool succeeded")
	}
}

func TestMCPUnknownToolInList(t *testing.T) {
	r := dtb(t, "mcp", "--deny", "evl")
	r.Fails(t, 2, "usage")
}

// tools/list stays small, and results are structured content: an object
// result is itself, beside the same JSON as text; a jq value that is no
// object is wrapped for the tools that declare an output schema, and is no
// structured content for the others. The go-sdk client checks neither, so
// the test checks both against the declared schemas.
func TestMCPStructuredContent(t *testing.T) {
	needBrowser(t)
	// A session of its own with no browser yet: no toolbar is connected at
	// the start, so run's schema is the one every host first sees.
	cs := mcpSessionNamed(t, reporterID("e2e-structured"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(list.Tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools, %d bytes", len(list.Tools), len(b))
	if len(b) > 16000 {
		t.Errorf("tools/list is %d bytes, over 16 KB", len(b))
	}
	schema := map[string]bool{}
	for _, tool := range list.Tools {
		if tool.Annotations == nil || tool.Title == "" {
			t.Errorf("%s: annotations %v, title %q", tool.Name, tool.Annotations, tool.Title)
		}
		if tool.OutputSchema != nil {
			schema[tool.Name] = true
			if get(tool.OutputSchema, "type") != "object" {
				t.Errorf("%s: output schema %v", tool.Name, tool.OutputSchema)
			}
		}
	}
	for _, want := range []string{"open", "status", "inspect", "extract", "screenshot", "state", "run"} {
		if !schema[want] {
			t.Errorf("%s declares no output schema", want)
		}
	}
	if schema["eval"] {
		t.Errorf("eval declares an output schema; its value is any JSON")
	}

	// structuredOf checks a result against its tool's declaration and
	// returns its structured content (nil for none).
	structuredOf := func(name string, res *mcp.CallToolResult) any {
		t.Helper()
		if res.IsError {
			t.Fatalf("%s: tool error %s", name, toolText(t, name, res))
		}
		if schema[name] {
			if m, ok := res.StructuredContent.(map[string]any); !ok {
				t.Errorf("%s declares an output schema and returned structured content %#v", name, res.StructuredContent)
			} else {
				return m
			}
		}
		return res.StructuredContent
	}
	parsed := func(name, text string) any {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s: text content is not JSON: %q", name, text)
		}
		return v
	}

	// An object result: structured content equal to the text's document.
	res := callTool(t, cs, "open", map[string]any{"url": shared.page("reporterId=" + reporterID("mcp-sc"))})
	text := toolText(t, "open", res)
	if sc := structuredOf("open", res); mustJSON(t, sc) != mustJSON(t, parsed("open", text)) {
		t.Errorf("open: structured %s, text %s", mustJSON(t, sc), text)
	}
	if get(res.StructuredContent, "tab", "id") == nil {
		t.Errorf("open's structured content has no tab id: %s", text)
	}
	res = callTool(t, cs, "status", nil)
	if sc := structuredOf("status", res); mustJSON(t, sc) != mustJSON(t, parsed("status", toolText(t, "status", res))) {
		t.Errorf("status: structured %s", mustJSON(t, sc))
	}
	// An action's object result, without a declared schema, is structured too.
	res = callTool(t, cs, "scroll", map[string]any{"to": "bottom"})
	if sc := structuredOf("scroll", res); sc == nil || mustJSON(t, sc) != mustJSON(t, parsed("scroll", toolText(t, "scroll", res))) {
		t.Errorf("scroll: structured %s, text %s", mustJSON(t, sc), toolText(t, "scroll", res))
	}

	// jq that yields no object: the text is the value; a tool with an output
	// schema wraps it, and no call is a validation error.
	res = callTool(t, cs, "status", map[string]any{"jq": ".currentTab.url"})
	text = toolText(t, "status", res)
	if sc := structuredOf("status", res); mustJSON(t, sc) != mustJSON(t, map[string]any{"result": parsed("status", text)}) {
		t.Errorf("status --jq .currentTab.url: structured %s, text %s", mustJSON(t, sc), text)
	}
	res = callTool(t, cs, "inspect", map[string]any{"jq": ".elements[]"})
	if sc, _ := structuredOf("inspect", res).(map[string]any); sc == nil || (sc["result"] == nil && sc["results"] == nil) {
		t.Errorf("inspect --jq .elements[]: structured %#v", res.StructuredContent)
	}
	// eval declares no schema: a number is no structured content, an object is.
	res = callTool(t, cs, "eval", map[string]any{"expr": "6 * 7"})
	if toolText(t, "eval", res) != "42" || structuredOf("eval", res) != nil {
		t.Errorf("eval 6 * 7: text %q, structured %#v", toolText(t, "eval", res), res.StructuredContent)
	}
	res = callTool(t, cs, "eval", map[string]any{"expr": "({answer: 42})"})
	if sc := structuredOf("eval", res); mustJSON(t, sc) != `{"answer":42}` {
		t.Errorf("eval ({answer: 42}): structured %s", mustJSON(t, sc))
	}
	// The screenshot's jq value is wrapped and the image still comes along.
	res = callTool(t, cs, "screenshot", map[string]any{"jq": ".format"})
	if sc := structuredOf("screenshot", res); mustJSON(t, sc) != `{"result":"jpeg"}` {
		t.Errorf("screenshot --jq .format: structured %s", mustJSON(t, sc))
	}
	if len(res.Content) < 2 {
		t.Errorf("screenshot returned %d contents, want the text and the image", len(res.Content))
	}
}
