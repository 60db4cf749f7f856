package commands

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/mcpserver"
)

// The MCP tools are the command tree seen from a model: every property comes
// from a flag definition (its type, default and choices) or from the table of
// positional arguments below, never from help prose. What the host decides
// (the browser program, connections, the session, printing) is no property.

// mcpInfo is what a tool adds to its command: words for a model, the
// positional arguments, and hints for hosts that approve calls by kind.
type mcpInfo struct {
	title, desc string
	args        []mcpserver.Param
	hints       string // r read-only, d destructive, i idempotent, w open world (web pages)
	dialog      bool   // takes the dialog answer (calls that may raise one)
}

func arg(name, typ, desc string) mcpserver.Param {
	return mcpserver.Param{Name: name, Type: typ, Description: desc}
}

func required(p mcpserver.Param) mcpserver.Param { p.Required = true; return p }

func withKind(p mcpserver.Param, kind string) mcpserver.Param { p.Kind = kind; return p }

func oneOf(p mcpserver.Param, values ...string) mcpserver.Param { p.Enum = values; return p }

func withDefault(p mcpserver.Param, v any) mcpserver.Param { p.Default = v; return p }

var (
	argElement = arg("selector", "string", "ref (@e3) or CSS selector")
	argTarget  = arg("target", "string", "drop target: ref (@e5) or CSS selector")
	// select and upload take the element as a leading ref; a CSS selector is
	// a flag of theirs the tools leave to the locator.
	argRef = arg("selector", "string", "ref (@e3) of the element")
)

var mcpInfos = map[string]mcpInfo{
	"open":          {"Open URL", "Open a URL and wait for it to load (new_tab: in another tab).", []mcpserver.Param{required(withKind(arg("url", "string", "the page's address"), mcpserver.KindURL))}, "iw", false},
	"back":          {"Go back", "Go back in the tab's history.", nil, "w", false},
	"forward":       {"Go forward", "Go forward in the tab's history.", nil, "w", false},
	"reload":        {"Reload", "Reload the page.", nil, "iw", false},
	"close":         {"Close tab", "Close a tab dtb opened, by default the current one.", nil, "d", false},
	"status":        {"Session status", "The session's browser and tabs.", nil, "ri", false},
	"inspect":       {"List elements", "List the page's interactive elements with refs for other tools (@e1).", nil, "riw", false},
	"extract":       {"Read page", "Read a page as text, reader view, Markdown, links and headings.", []mcpserver.Param{withKind(arg("url", "string", "a page to open first"), mcpserver.KindURL)}, "rw", false},
	"screenshot":    {"Screenshot", "Screenshot the page or an element; the image is returned.", []mcpserver.Param{arg("locator", "string", "element to capture: ref (@e3) or CSS selector")}, "riw", false},
	"pdf":           {"Save PDF", "Save the page as a PDF file in the output folder.", nil, "riw", false},
	"click":         {"Click", "Click an element; the result says what changed.", []mcpserver.Param{argElement}, "w", true},
	"hover":         {"Hover", "Hover over an element (menus, tooltips).", []mcpserver.Param{argElement}, "iw", false},
	"check":         {"Check", "Check a checkbox or radio button.", []mcpserver.Param{argElement}, "iw", false},
	"uncheck":       {"Uncheck", "Uncheck a checkbox.", []mcpserver.Param{argElement}, "iw", false},
	"type":          {"Type text", "Type text into a field, or the focused element.", []mcpserver.Param{argElement, required(arg("text", "string", "the text to type"))}, "w", true},
	"press":         {"Press key", "Press a key or chord on an element or the focused one.", []mcpserver.Param{argElement, required(arg("key", "string", "e.g. Enter, Tab, Control+A"))}, "w", true},
	"select":        {"Select option", "Choose options of a <select> by value or label.", []mcpserver.Param{argRef, required(arg("values", "array", "option values or labels"))}, "iw", false},
	"upload":        {"Upload files", "Put files from the upload folder on a file input.", []mcpserver.Param{argRef, required(withKind(arg("files", "array", "file paths in the upload folder"), mcpserver.KindUpload))}, "w", false},
	"drag":          {"Drag", "Drag an element onto another.", []mcpserver.Param{arg("source", "string", "ref (@e3) or CSS selector"), argTarget}, "w", false},
	"scroll":        {"Scroll", "Scroll an element into view, by pixels, or to an edge.", []mcpserver.Param{argElement}, "iw", false},
	"wait":          {"Wait", "Wait for the load, an element, the URL or a script on a slow page.", nil, "riw", false},
	"eval":          {"Run JavaScript", "Run JavaScript in the page and return its value.", []mcpserver.Param{required(arg("expr", "string", "expression; promises are awaited"))}, "dw", true},
	"dialog":        {"Dialog", "See the page's open alert, confirm or prompt, or answer it.", []mcpserver.Param{oneOf(arg("answer", "string", "leave out to only look"), "accept", "dismiss")}, "w", false},
	"console":       {"Console", "The page's console messages and uncaught errors.", nil, "riw", false},
	"network":       {"Network", "The page's network requests and failures.", nil, "riw", false},
	"cookies_get":   {"Get cookies", "List the cookies of the tab's URL.", []mcpserver.Param{arg("name", "string", "only this cookie")}, "riw", false},
	"cookies_set":   {"Set cookie", "Set a cookie for the tab's URL.", []mcpserver.Param{required(arg("name", "string", "the cookie's name")), required(arg("value", "string", "the cookie's value"))}, "iw", false},
	"cookies_clear": {"Clear cookies", "Delete the tab's cookies, or one.", []mcpserver.Param{arg("name", "string", "only this cookie")}, "diw", false},
	"storage": {"Web storage", "Read or change localStorage or sessionStorage.", []mcpserver.Param{
		required(oneOf(arg("area", "string", "which storage"), "local", "session")),
		withDefault(oneOf(arg("op", "string", "what to do"), "list", "get", "set", "remove", "clear"), "list"),
		arg("key", "string", "the key"), arg("value", "string", "the value to set")}, "dw", false},
	"search":         {"Web search", "Search the web: ranked hits with URLs.", []mcpserver.Param{required(arg("queries", "array", "one or more queries"))}, "rw", false},
	"state":          {"Toolbar state", "The app's state from its dev toolbar: flags, metrics, environment.", nil, "riw", false},
	"commands":       {"Toolbar commands", "List the app toolbar's commands and their inputs.", nil, "riw", false},
	"run":            {"Run toolbar command", "Run an app toolbar command (see commands).", []mcpserver.Param{required(arg("id", "string", "command id from commands")), {Name: "input", Type: "object", Description: "the command's input"}}, "dw", false},
	"browser_launch": {"Launch browser", "Start the session's browser (tools start it if needed).", nil, "i", false},
	"browser_stop":   {"Stop browser", "Stop the session's browser.", nil, "di", false},
	"version":        {"Version", "dtb's version.", nil, "ri", false},
}

// mcpCoreTools are the tools of --tools core: a page's whole loop (open,
// look, act, read) and the app's toolbar, for hosts that want few tools.
var mcpCoreTools = []string{"open", "inspect", "click", "type", "press", "select", "screenshot", "extract", "state", "run"}

// mcpHidden are the commands that are no tools: the server itself, the long-running
// relay server and shell set-up.
var mcpHidden = map[string]bool{"mcp": true, "relay": true, "completion": true, "help": true,
	// Routes change what every tab of the session receives: the MCP host
	// sets them up (dtb route in the same session), not the model.
	"route": true, "unroute": true}

// mcpServerOwned are the flags the host fixes when it starts dtb mcp (flags
// of the server, or its environment), never a model: which program runs as
// the browser and how it is reached, the session, the relay, the profile.
var mcpServerOwned = []string{"session", "chrome", "cdp", "cdp-header", "cdp-ca", "auto-connect", "connect-timeout", "no-launch", "headed", "user-data-dir", "window-size", "viewport", "relay", "global"}

// mcpDropped are flags no tool offers: the printing the server fixes, local
// files a model must not name (eval --file, run --input-file, --stdin), and
// set-up a model does not need (workspaces, streaming, locator variants).
var mcpDropped = map[string]bool{
	"help": true, "pretty": true, "compact": true, "color": true, "json-errors": true, "max-bytes": true, "raw": true, "arg": true,
	"file": true, "input-file": true, "stdin": true,
	"workspace": true, "instance": true, "watch": true, "settle": true, "settle-cap": true, "placeholder": true, "document": true,
	"incognito": true, "parser": true, "dialog": true, "ready-timeout": true, "quiet-ms": true, "since": true,
	// The locator in a model's hands: a ref or CSS selector as the element
	// argument, or role, name and has_text (mcpLocator).
	"css": true, "ref": true, "exact": true, "x": true, "y": true, "frame": true, "within": true,
}

// mcpShared are a model's words for options: the ones most tools share, said
// once briefly, and the ones whose CLI usage lists what the enum already says
// or reads as help (placeholders, defaults, flag names).
var mcpShared = map[string]string{
	"jq":        "jq filter",
	"timeout":   "max wait",
	"tab":       "tab id; default the current",
	"dialog":    "answer a dialog it opens",
	"role":      "ARIA role",
	"name":      "accessible name",
	"has_text":  "visible text",
	"label":     "the form field's label",
	"js":        "JavaScript that must be truthy",
	"gone":      "wait for the element to go",
	"load":      "wait for the load",
	"count":     "2 for a double click",
	"text":      "text for a prompt",
	"hard":      "bypass the cache",
	"full":      "the whole page, beyond the viewport",
	"dy":        "pixels down (negative: up)",
	"button":    "mouse button",
	"format":    "image format",
	"wait":      "load event to wait for",
	"level":     "lowest level listed",
	"to":        "edge to scroll to",
	"reporter":  "one page's reporter id",
	"engine":    "duckduckgo, bing, google, brave or a URL with %s",
	"include":   "comma-separated: text, reader, markdown, links, headings, frames",
	"max_chars": "cut texts at this many characters",
	"until":     "jq predicate to poll the state for",
	"filter":    "URL substring or /regexp/",
	"in":        "only inside this element (CSS or @e3)",
	"limit":     "at most this many hits",
	"wait_text": "wait until the page shows this text",
	"force":     "click even if covered",
	"by_label":  "match labels, not values",
}

// mcpToolWords are words for one tool's option whose name means something
// else elsewhere, by "tool.property".
var mcpToolWords = map[string]string{
	"console.clear":   "empty the buffer after reading",
	"type.clear":      "replace the current content",
	"wait.url":        "text the URL must contain",
	"cookies_get.url": "URLs to read instead of the tab's",
}

// mcpToolFlags are the command flags each tool offers besides jq, the
// locator (role, name, label, has_text, nth), tab and timeout: what a model
// needs, so that tools/list stays small. A flag not listed stays the CLI's.
var mcpToolFlags = map[string]string{
	"open":        "current wait",
	"reload":      "hard",
	"inspect":     "in",
	"extract":     "include max-chars wait-text",
	"screenshot":  "full format out annotate",
	"pdf":         "out",
	"click":       "button count force",
	"type":        "clear submit",
	"select":      "by-label",
	"scroll":      "dy to",
	"wait":        "load gone url js",
	"dialog":      "text",
	"console":     "level clear",
	"network":     "failed filter",
	"cookies_get": "url",
	"cookies_set": "url",
	"search":      "engine limit",
	"state":       "until reporter",
	"commands":    "reporter",
	"run":         "reporter",
	"drag":        "",
}

// mcpAlways are offered by every tool that has them (tab and timeout as below).
var mcpAlways = map[string]bool{"jq": true, "tab": true, "timeout": true}

// mcpJQTools take jq: the tools whose results are long.
var mcpJQTools = map[string]bool{"inspect": true, "extract": true, "state": true, "commands": true, "status": true, "console": true, "network": true, "cookies_get": true, "search": true, "run": true, "storage": true, "screenshot": true}

// mcpLocator are the locator flags a tool offers besides its element
// argument: what a page shows for the tools aimed at by it, a form field's
// label for the form tools. The other tools take a ref or CSS selector only.
var mcpLocator = map[string]string{"click": "role name text", "wait": "role name text", "type": "label", "select": "label", "check": "label", "uncheck": "label"}

// mcpDataTools declare an output schema: their results are data a host may
// use. Every object result is structured content; the other tools' results
// are acknowledgements of an action (or, for eval, any value) and declare none.
var mcpDataTools = map[string]bool{"open": true, "status": true, "inspect": true, "extract": true, "screenshot": true, "pdf": true, "console": true, "network": true, "cookies_get": true, "storage": true, "search": true, "state": true, "commands": true, "run": true, "dialog": true, "version": true}

// mcpTabTools take tab: the others act on the session's current tab (open
// with new_tab makes the new one current).
var mcpTabTools = map[string]bool{"close": true}

// mcpWaitTools take timeout: they wait for the page, the page's code or the
// toolbar. Element tools wait the server's short timeout; a model that
// expects a slow element calls wait first (navigations keep the CLI's ample
// default).
var mcpWaitTools = map[string]bool{"open": true, "extract": true, "eval": true, "run": true, "state": true, "wait": true, "search": true}

// mcpImageTools return their captured file as image content too.
var mcpImageTools = map[string]bool{"screenshot": true}

// mcpTools describes every command of the tree as a tool; lookups with a
// locator wait lookupTimeout by default.
func mcpTools(cmds []*cli.Command, lookupTimeout time.Duration) []mcpserver.Tool {
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
			tools = append(tools, mcpTool(p, c, lookupTimeout))
		}
	}
	walk(nil, cmds)
	return tools
}

func mcpTool(path []string, c *cli.Command, lookupTimeout time.Duration) mcpserver.Tool {
	name := strings.Join(path, "_")
	info, known := mcpInfos[name]
	if !known {
		info = mcpInfo{title: name, desc: c.Usage, hints: "w"}
	}
	t := mcpserver.Tool{
		Name: name, Command: path, Title: info.title, Description: info.desc, Image: mcpImageTools[c.Name], OutputSchema: mcpDataTools[name],
		ReadOnly: strings.Contains(info.hints, "r"), Destructive: strings.Contains(info.hints, "d"),
		Idempotent: strings.Contains(info.hints, "i"), OpenWorld: strings.Contains(info.hints, "w"),
	}
	owned := map[string]bool{}
	for _, n := range mcpServerOwned {
		owned[n] = true
	}
	// A command that looks an element up waits the server's short timeout.
	lookup := hasLocator(c)
	for _, f := range prepareFlags(c) {
		fname := flagName(f)
		if owned[fname] || mcpDropped[fname] && !(fname == "dialog" && info.dialog) || strings.HasPrefix(fname, "to-") && name == "drag" {
			continue
		}
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		locator := flagCategory(f) == catLocator
		if !locator && !mcpAlways[fname] && !slices.Contains(strings.Fields(mcpToolFlags[name]), fname) && !(fname == "dialog" && info.dialog) {
			continue
		}
		if fname == "jq" && !mcpJQTools[name] || locator && !slices.Contains(strings.Fields(mcpLocator[name]), fname) {
			continue
		}
		if fname == "tab" && !mcpTabTools[name] || fname == "timeout" && !mcpWaitTools[name] {
			continue
		}
		p := mcpParam(f)
		if locator {
			if fname == "text" {
				p.Name = "has_text" // "text" is what type types
			}
			if w, ok := mcpShared[p.Name]; ok {
				p.Description = w
			}
		}
		if w, ok := mcpToolWords[name+"."+p.Name]; ok {
			p.Description = w
		}
		switch fname {
		case "out":
			p.Kind = mcpserver.KindPath
			p.Description = "file name in the output folder"
		case "engine":
			p.Kind = mcpserver.KindURL
		case "current":
			if name == "open" {
				p.Name, p.Description, p.Invert = "new_tab", "open in a new tab", true
			}
		}
		t.Params = append(t.Params, p)
	}
	if lookup && lookupTimeout > 0 {
		t.Defaults = map[string]string{"timeout": lookupTimeout.String()}
		for i := range t.Params {
			if t.Params[i].Flag == "timeout" {
				t.Params[i].Default = lookupTimeout.String()
			}
		}
	}
	if name == "open" {
		// The session's tab is reused; new_tab asks for another.
		t.Defaults = map[string]string{"current": "true"}
		t.Fallback = []string{"no-such-tab", "not-owned", "no-page-connected"}
	}
	t.Params = append(t.Params, info.args...)
	return t
}

// mcpParam is the input property of a flag: its type, default and choices
// from the definition, its usage in a model's words.
func mcpParam(f cli.Flag) mcpserver.Param {
	name := flagName(f)
	p := mcpserver.Param{Name: mcpName(name), Flag: name, Type: flagType(f), Enum: flagChoices[name], Description: mcpWords(flagUsage(f))}
	if w, ok := mcpShared[p.Name]; ok {
		p.Description = w
	}
	switch f := f.(type) {
	case *cli.BoolFlag:
		if f.Value {
			p.Default = true
		}
	case *cli.StringFlag:
		if f.Value != "" {
			p.Default = f.Value
		}
	case *cli.IntFlag:
		if f.Value != 0 {
			p.Default = f.Value
		}
	case *cli.Float64Flag:
		if f.Value != 0 {
			p.Default = f.Value
		}
	case *cli.DurationFlag:
		if f.Value != 0 {
			p.Default = f.Value.String()
		}
	}
	return p
}

func flagUsage(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.GetUsage()
	}
	return ""
}

func flagCategory(f cli.Flag) string {
	if c, ok := f.(cli.CategorizableFlag); ok {
		return c.GetCategory()
	}
	return ""
}

var (
	cliFlagWord = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	// A parenthesis of a usage is a CLI aside: defaults, exit codes, env.
	usageAside = regexp.MustCompile(`\s*\([^()]*\)`)
)

// mcpWords is a flag's usage for a model: no placeholder backticks, other
// flags by their property names, and only its first clause.
func mcpWords(usage string) string {
	s := strings.ReplaceAll(usage, "`", "")
	s = usageAside.ReplaceAllString(s, "")
	s = cliFlagWord.ReplaceAllStringFunc(s, func(w string) string { return mcpName(w[2:]) })
	if i := strings.Index(s, "; "); i > 0 {
		s = s[:i]
	}
	return s
}

func hasLocator(c *cli.Command) bool {
	for _, f := range c.Flags {
		if flagCategory(f) == catLocator {
			return true
		}
	}
	return false
}
