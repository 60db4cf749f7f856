package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/output"
)

// TestMain builds the real dtb: "exec dtb …" in a script runs this test binary as
// dtb, through commands.Main exactly as cmd/dtb does. The *_cli_test.go tests run
// cmd/dtb itself, built once (browsertest.MustBuild) and removed at the end.
func TestMain(m *testing.M) {
	testscript.Main(browsertest.Releasing(m), map[string]func(){
		"dtb": func() {
			os.Exit(Main(os.Args, IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
		},
	})
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own fake relay at
// $RELAY (see fakeRelay), a URL nothing listens on at $DEAD, and two commands:
//
//	exits CODE PROG [ARGS...]   run PROG and require exit status CODE (for stdout/stderr checks)
//	fakerelay MODE...           change the fake relay (modes: see fakeRelay.set)
//	interrupt AFTER CODE PROG [ARGS...]
//	                            run PROG, send it SIGINT after AFTER, require exit CODE;
//	                            its output is left in interrupt.stdout and interrupt.stderr
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			fr := newFakeRelay()
			srv := httptest.NewServer(fr)
			env.Defer(srv.Close)
			env.Values[fakeRelayKey{}] = fr
			env.Setenv("RELAY", srv.URL)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			env.Setenv("DEAD", "http://"+l.Addr().String())
			// The scripts run the test binary as dtb: it cannot start a session host.
			env.Setenv("DTB_HOST", "off")
			l.Close()
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"fakerelay": cmdFakeRelay,
			"interrupt": cmdInterrupt,
		},
	})
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits (give the expected code instead)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func cmdInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: interrupt AFTER CODE PROG [ARGS...]")
	}
	after, err := time.ParseDuration(args[0])
	ts.Check(err)
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	prog, err := exec.LookPath(args[2]) // testscript put dtb on this process's PATH
	ts.Check(err)
	cmd := exec.Command(prog, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME"), "TMPDIR=" + ts.Getenv("TMPDIR")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ts.Check(cmd.Start())
	timer := time.AfterFunc(after, func() { cmd.Process.Signal(os.Interrupt) })
	defer timer.Stop()
	_ = cmd.Wait()
	ts.Check(os.WriteFile(ts.MkAbs("interrupt.stdout"), stdout.Bytes(), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs("interrupt.stderr"), stderr.Bytes(), 0o644))
	if got := cmd.ProcessState.ExitCode(); got != want {
		ts.Fatalf("%s exited %d after SIGINT, want %d\nstderr: %s", args[2], got, want, stderr.String())
	}
}

type fakeRelayKey struct{}

func cmdFakeRelay(ts *testscript.TestScript, neg bool, args []string) {
	fr := ts.Value(fakeRelayKey{}).(*fakeRelay)
	if err := fr.set(args); err != nil {
		ts.Fatalf("fakerelay: %v", err)
	}
}

// fakeRelay answers the four relay routes (spec §4) from canned documents, the
// way the relay does: pretty-printed JSON, the state's own keys then connection
// then extensions, page outcomes with command, ranIn and waitedMs.
type fakeRelay struct {
	mu           sync.Mutex
	stale        bool
	ambiguous    bool
	allowRun     bool
	html         bool // answer as a dev server without the middleware (SPA fallback)
	viteBlocked  bool // answer as Vite refusing the Host
	notConnected int  // answer this many state/commands GETs with 503 no-page-connected
	posts        []string
}

func newFakeRelay() *fakeRelay { return &fakeRelay{allowRun: true} }

// set changes the relay: normal | stale | ambiguous | no-run | html | vite-blocked |
// connect-after N | expect-posts N (checks and resets the count of POSTs received)
// | last-post BODY (checks the last POST's "path body").
func (f *fakeRelay) set(args []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "normal":
			f.stale, f.ambiguous, f.allowRun, f.html, f.viteBlocked, f.notConnected = false, false, true, false, false, 0
		case "stale":
			f.stale = true
		case "ambiguous":
			f.ambiguous = true
		case "no-run":
			f.allowRun = false
		case "html":
			f.html = true
		case "vite-blocked":
			f.viteBlocked = true
		case "connect-after", "expect-posts", "last-post":
			if i+1 >= len(args) {
				return fmt.Errorf("%s needs a value", args[i])
			}
			val := args[i+1]
			i++
			switch args[i-1] {
			case "connect-after":
				n, err := strconv.Atoi(val)
				if err != nil {
					return err
				}
				f.notConnected = n
			case "expect-posts":
				n, err := strconv.Atoi(val)
				if err != nil {
					return err
				}
				if len(f.posts) != n {
					return fmt.Errorf("the relay received %d POSTs, want %d: %q", len(f.posts), n, f.posts)
				}
				f.posts = nil
			case "last-post":
				if len(f.posts) == 0 {
					return fmt.Errorf("no POST received, want %q", val)
				}
				if last := f.posts[len(f.posts)-1]; last != val {
					return fmt.Errorf("last POST was %q, want %q", last, val)
				}
			}
		default:
			return fmt.Errorf("unknown mode %q", args[i])
		}
	}
	return nil
}

func (f *fakeRelay) connection(reporter string) string {
	reporterID, reporters := "tab-a", 1
	if f.ambiguous {
		reporterID, reporters = "tab-b", 2
	}
	if reporter != "" {
		reporterID = reporter
	}
	ageMs, checkedIn := 420, "2026-09-03T10:15:02.512Z"
	if f.stale {
		ageMs, checkedIn = 9420, "2026-09-03T10:14:55.100Z"
	}
	return fmt.Sprintf(`{"instanceId":"playground","allowRun":%t,"connected":%t,"checkedInAt":%q,"reportedAt":"2026-09-03T10:15:01.007Z","ageMs":%d,"stale":%t,"staleMs":3000,"reporterId":%q,"reporters":%d,"ambiguous":%t}`,
		f.allowRun, !f.stale, checkedIn, ageMs, f.stale, reporterID, reporters, reporters > 1)
}

func (f *fakeRelay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.viteBlocked {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(403)
		fmt.Fprintf(w, "Blocked request. This host (%q) is not allowed.\nTo allow this host, add %q to `server.allowedHosts` in vite.config.js.", r.Host, r.Host)
		return
	}
	if f.html {
		// A dev server without the middleware: the SPA fallback for a GET, an empty
		// 404 for a POST (spec §8.5).
		if r.Method == "GET" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><html><body><div id=root></div></body></html>\n")
			return
		}
		w.WriteHeader(404)
		return
	}
	reporter := r.URL.Query().Get("reporter")
	route := r.Method + " " + r.URL.Path
	switch {
	case route == "GET /__dev-toolbar/state" || route == "GET /__dev-toolbar/commands":
		if f.notConnected > 0 {
			f.notConnected--
			writeRelay(w, 503, `{"ok":false,"reason":"no-page-connected","message":"No page has reported to /__dev-toolbar yet. Open the app with the agent bridge's `+"`report`"+` option pointed at \"/__dev-toolbar/state\" — this middleware cannot call the page.","connection":{"instanceId":null,"allowRun":false,"connected":false,"checkedInAt":null,"reportedAt":null,"ageMs":null,"stale":true,"staleMs":3000,"reporterId":null,"reporters":0,"ambiguous":false}}`)
			return
		}
		if strings.HasSuffix(route, "/state") {
			writeRelay(w, 200, fakeSnapshotKeys+`,"connection":`+f.connection(reporter)+`,"extensions":`+fakeExtensions+`}`)
		} else {
			writeRelay(w, 200, fmt.Sprintf(`{"instanceId":"playground","allowRun":%t,"connection":%s,"commands":%s}`, f.allowRun, f.connection(reporter), fakeCommands))
		}
	case r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/__dev-toolbar/commands/"):
		f.post(w, r)
	default:
		writeRelay(w, 404, fmt.Sprintf(`{"ok":false,"reason":"unknown-route","message":%q,"routes":["GET /__dev-toolbar/state","GET /__dev-toolbar/commands","POST /__dev-toolbar/commands/:id","POST /__dev-toolbar/state (the page checks in here)"]}`, "No such route: "+route))
	}
}

// post answers POST /commands/:id as the page would through the relay: the input
// comes back as the result, "yes" for a boolean flag throws (422), an id the page
// does not declare is 404 unknown-command.
func (f *fakeRelay) post(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/__dev-toolbar/commands/")
	body, _ := io.ReadAll(r.Body)
	f.posts = append(f.posts, r.URL.EscapedPath()+" "+string(body))
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && !json.Valid(trimmed) {
		writeRelay(w, 400, `{"ok":false,"reason":"bad-body","message":"The request body must be JSON (the command's input) or empty: Unexpected token"}`)
		return
	}
	if !f.allowRun {
		writeRelay(w, 403, `{"ok":false,"reason":"run-not-allowed","message":"The connected page's bridge was built with allowRun: false, so it carries no runCommand. Pass `+"`agentBridge({ allowRun: true })`"+` to enable this route.","connection":`+f.connection("")+`}`)
		return
	}
	if id == "slow.command" {
		// Held like a command the page has not answered yet, until dtb gives up.
		f.mu.Unlock()
		<-r.Context().Done()
		f.mu.Lock()
		return
	}
	idJSON, _ := json.Marshal(id)
	tail := fmt.Sprintf(`"command":%s,"ranIn":"tab-a","waitedMs":3`, idJSON)
	switch {
	case !strings.Contains(fakeCommands, `"id":`+string(idJSON)) && id != "kit/demo 100%":
		writeRelay(w, 404, `{"ok":false,"reason":"unknown-command",`+tail+`}`)
	case id == "flags.set" && bytes.Contains(trimmed, []byte(`"new-header"`)) && bytes.Contains(trimmed, []byte(`"yes"`)):
		writeRelay(w, 422, `{"ok":false,"reason":"threw","error":"\"new-header\" is a boolean flag; \"yes\" is not a valid boolean value.","errorName":"Error",`+tail+`}`)
	case len(trimmed) == 0:
		writeRelay(w, 200, `{"ok":true,`+tail+`}`)
	default:
		writeRelay(w, 200, `{"ok":true,"result":`+string(trimmed)+`,`+tail+`}`)
	}
}

func writeRelay(w http.ResponseWriter, status int, body string) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(body), "", "  "); err != nil {
		panic(fmt.Sprintf("fake relay body is not JSON: %v: %s", err, body))
	}
	buf.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fakeCommands is the page's command list: flags.set (a required string and a
// polymorphic value), theme.set (an enum), env.info (no input).
const fakeCommands = `[
 {"id":"flags.set","label":"Set a feature flag override","description":"Overrides one flag by key.","group":"Flags","keywords":["flag","override"],
  "input":{"fields":{
   "key":{"type":"string","required":true,"description":"The flag's key, exactly as the catalogue spells it."},
   "value":{"type":["boolean","string","number"],"description":"The value to force."}}}},
 {"id":"theme.set","label":"Set the colour scheme","group":"Theme",
  "input":{"fields":{"scheme":{"type":"enum","values":["light","dark","system"],"required":true}}}},
 {"id":"env.info","label":"Show the environment","group":"Environment"}
]`

// fakeSnapshotKeys is the snapshot's own keys (spec §5.10, shortened), without the
// closing brace: connection and extensions follow.
const fakeSnapshotKeys = `{"instanceId":"playground","contractVersion":2,"visible":true,"allowRun":true,
 "commands":[{"id":"flags.set","label":"Set a feature flag override","group":"Flags"},{"id":"theme.set","label":"Set the colour scheme"},{"id":"env.info","label":"Show the environment"}],
 "shell":{"mounted":true,"position":"bottom","density":"compact","colorScheme":"system",
  "heightVariable":{"name":"--dev-toolbar-height-playground","value":"36px"},
  "bar":[{"id":"environment","align":"start","panelOpen":false},{"id":"flags","align":"start","panelOpen":false}],
  "overflow":{"present":true,"open":false,"items":[]},"activePanel":null},
 "diagnostics":[
  {"id":"agent","label":"Agent","status":"absent"},
  {"id":"flags","label":"Flags","status":"ok","data":` + fakeFlags + `},
  {"id":"boom","label":"Boom","status":"failed","error":"boom"}]`

const fakeFlags = `{"generatedAt":"2026-09-03T10:15:01.004Z","writable":true,"supplied":true,"overriddenCount":1,"maskedCount":1,"reloadPending":["search.rank"],"readError":null,"bulkError":null,
  "flags":[
   {"key":"search.rank","type":"number","source":"local-override","overridden":true,"masked":false,"reloadBehavior":"full-reload","effective":9,"base":2,"default":1,"tags":["override","reload"]},
   {"key":"checkout.apiToken","type":"string","source":"server-rule","overridden":false,"masked":true,"reloadBehavior":"live","effective":"[redacted]","base":"[redacted]","default":"null","tags":["masked"]},
   {"key":"new-header","type":"boolean","source":"server-rule","overridden":false,"masked":false,"reloadBehavior":"live","effective":true,"base":true,"default":false,"tags":["expired"]}],
  "overrides":[{"key":"search.rank","value":"9","was":"2","masked":false,"reloadBehavior":"full-reload"}]}`

const fakeExtensions = `{"agent":null,"flags":` + fakeFlags + `,"boom":null}`

// normalizeArgs is what lets flags stand anywhere; these cases need a command tree
// with subcommands, which the real one may not have yet.
func TestNormalizeArgs(t *testing.T) {
	app := &cli.App{Commands: []*cli.Command{
		{Name: "state", Flags: []cli.Flag{
			&cli.StringFlag{Name: "relay"}, &cli.StringFlag{Name: "jq", Aliases: []string{"q"}},
			&cli.BoolFlag{Name: "raw", Aliases: []string{"r"}}, &cli.BoolFlag{Name: "fresh"},
		}},
		{Name: "run", Flags: []cli.Flag{&cli.StringFlag{Name: "jq"}, &cli.BoolFlag{Name: "no-check"}}},
		{Name: "browser", Flags: []cli.Flag{&cli.StringFlag{Name: "session"}}, Subcommands: []*cli.Command{
			{Name: "launch", Flags: []cli.Flag{&cli.StringFlag{Name: "session"}, &cli.BoolFlag{Name: "headed"}}},
		}},
	}}
	tests := []struct {
		in, want string
	}{
		{"dtb state", "dtb state"},
		{"dtb --relay URL state", "dtb state --relay URL"},
		{"dtb --relay=URL state --fresh", "dtb state --relay=URL --fresh"},
		{"dtb state --relay URL", "dtb state --relay URL"},
		{"dtb -r state -q .x", "dtb state -r -q .x"},
		{"dtb run flags.set key=a value=1 --jq .ok", "dtb run --jq .ok -- flags.set key=a value=1"},
		{"dtb run flags.set --no-check key=-1 -5", "dtb run --no-check -- flags.set key=-1 -5"},
		{"dtb run flags.set -", "dtb run -- flags.set -"},
		{"dtb run --jq .ok -- x --not-a-flag", "dtb run --jq .ok -- x --not-a-flag"},
		{"dtb browser launch --headed", "dtb browser launch --headed"},
		{"dtb browser --headed launch", "dtb browser launch --headed"},
		{"dtb browser --session s1 launch", "dtb browser launch --session s1"},
		{"dtb --session s1 browser launch", "dtb browser launch --session s1"},
		{"dtb --help", "dtb --help"},
		{"dtb help state", "dtb help state"},
		{"dtb sta --generate-bash-completion", "dtb sta --generate-bash-completion"},
	}
	for _, tc := range tests {
		got, err := normalizeArgs(app, strings.Fields(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, strings.Join(got, " "), tc.want)
		}
	}
	for _, bad := range []string{"dtb nope", "dtb --relay URL stat", "dtb browser nope", "dtb browser --session s nope"} {
		if _, err := normalizeArgs(app, strings.Fields(bad)); err == nil {
			t.Errorf("%s: no error for an unknown command", bad)
		}
	}
}

// TestUsageExamplesParse checks that every example in a command's usage text (the
// lines starting with "dtb ", which docs/commands.md shows) parses: the command
// exists, its flags exist and take the values given, and its jq programs compile.
// Nothing is run.
func TestUsageExamplesParse(t *testing.T) {
	// urfave copies DTB_* values into the shared flag definitions when it parses;
	// keep a developer's environment out of them (and out of docs/commands.md).
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "DTB_") {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, v) })
		}
	}
	app := NewApp()
	var texts []string
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			texts = append(texts, c.UsageText)
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	texts = append(texts, app.Description)
	// The README's and the docs' examples are held to the same rule.
	docs, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	for _, f := range append(docs, filepath.Join("..", "README.md")) {
		if strings.HasSuffix(f, "commands.md") {
			continue // generated from the usage texts checked above
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, codeBlocks(string(b)))
	}
	var checked int
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			line = strings.TrimPrefix(line, "$ ")
			if i := strings.Index(line, "dtb "); i > 0 && strings.HasPrefix(line, "DTB_") {
				line = line[i:] // "DTB_RELAY=… dtb state": the environment is not parsed
			}
			if !strings.HasPrefix(line, "dtb ") || strings.Contains(line, "`") {
				continue
			}
			if i := strings.Index(line, "  #"); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			if synopsis.MatchString(line) {
				continue // "dtb run ID [JSON | key=value ...]": a synopsis, not an example
			}
			args, err := shellWords(line)
			if errors.Is(err, errOperator) {
				continue // a pipeline or a redirection: not one invocation
			}
			if err != nil {
				t.Errorf("example %q: %v", line, err)
				continue
			}
			if findCommand(app.Commands, args[1]) == nil && text == app.Description {
				t.Logf("example %q: no command %q yet", line, args[1])
				continue
			}
			checked++
			if err := parseOnly(args); err != nil {
				t.Errorf("example %q does not parse: %v", line, err)
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d examples checked", checked)
	}
}

// parseOnly runs the command line through dtb's argument handling with every
// action replaced by one that only validates the output flags and --until.
func parseOnly(args []string) error {
	app := NewApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	check := func(c *cli.Context) error {
		opts, err := outputOptions(c)
		if err != nil {
			return err
		}
		if err := output.New(opts, io.Discard, io.Discard).Prepare(); err != nil {
			return err
		}
		for _, name := range c.FlagNames() {
			if name == "until" {
				if _, err := output.CompileJQ(c.String("until"), opts.Args); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var clone func(cmds []*cli.Command) []*cli.Command
	clone = func(cmds []*cli.Command) []*cli.Command {
		out := make([]*cli.Command, len(cmds))
		for i, c := range cmds {
			cp := *c
			cp.Flags = append([]cli.Flag(nil), c.Flags...)
			if cp.Action != nil {
				cp.Action = check
			}
			cp.Subcommands = clone(c.Subcommands)
			out[i] = &cp
		}
		return out
	}
	app.Commands = clone(app.Commands)
	normalized, err := normalizeArgs(app, args)
	if err != nil {
		return err
	}
	return app.Run(normalized)
}

var (
	synopsis    = regexp.MustCompile(`\s\[[-A-Z]|\s[A-Z]{2,}\b`)
	errOperator = errors.New("shell operator")
)

// shellWords splits a command line with POSIX-shell quoting ('…', "…", \x).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \"")
			}
			inWord = true
		case strings.IndexByte("|&;<>", ch) >= 0 || (ch == '$' && i+1 < len(s) && s[i+1] == '('):
			return nil, errOperator
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// codeBlocks is the text of a Markdown document's fenced code blocks.
func codeBlocks(md string) string {
	var out []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
