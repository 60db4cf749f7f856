package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestNewRefusesNonLoopbackListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:5273", ":5273", "192.168.1.2:80", "example.com:5273", "[::]:5273", "localhost.:1", "10.0.0.1"} {
		_, err := New(Options{Listen: addr})
		var oe *OptionError
		if !errors.Is(err, ErrNonLoopback) || !errors.As(err, &oe) || oe.Reason != "non-loopback-host" {
			t.Errorf("Listen %q: got %v", addr, err)
		}
	}
	for _, addr := range []string{"", "127.0.0.1:0", "localhost:0", "LOCALHOST:0", "[::1]:0", "127.1.2.3:0", "127.0.0.1", "::1"} {
		if _, err := New(Options{Listen: addr}); err != nil {
			t.Errorf("Listen %q refused: %v", addr, err)
		}
	}
	for _, o := range []Options{{Listen: "127.0.0.1:99999"}, {StaleMs: -1}, {TimeoutMs: -5}, {LongPollMs: -1},
		{LongPollMs: 6000}, {Base: "nope"}, {Upstream: "ftp://x"}, {Upstream: "localhost:5173"}, {Static: "/does/not/exist"}} {
		_, err := New(o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Reason != "usage" || errors.Is(err, ErrNonLoopback) {
			t.Errorf("%+v: got %v", o, err)
		}
	}
}

func TestHostGuard(t *testing.T) {
	for host, ok := range map[string]bool{
		"localhost": true, "localhost:5273": true, "LocalHost:1": true, "127.0.0.1": true, "127.0.0.1:5273": true,
		"[::1]": true, "[::1]:5273": true, " localhost ": true, "[0:0:0:0:0:0:0:1]": false, "[::1": false,
		"": false, "0.0.0.0": false, "127.0.0.2": false, "localhost.": false, "::1": false,
		"evil.example:5273": false, "a.localhost": false, "0:0:0:0:0:0:0:1": false,
	} {
		if (&Server{}).hostAllowed(host) != ok {
			t.Errorf("hostAllowed(%q) = %v", host, !ok)
		}
	}

	rt := newRelay(t, Options{})
	for _, c := range []struct {
		host, origin string
		status       int
		reason       string
	}{
		{"localhost:5273", "", 503, "no-page-connected"},
		{"127.0.0.1", "", 503, "no-page-connected"},
		{"[::1]:5273", "", 503, "no-page-connected"},
		{"LOCALHOST:5273", "http://LOCALHOST:5273", 503, "no-page-connected"},
		{"localhost:5273", "http://localhost:5273", 503, "no-page-connected"},
		{"localhost:5273", "https://localhost:5273", 503, "no-page-connected"},
		{"evil.example:5273", "", 403, "non-loopback-host"},
		{"127.0.0.2:5273", "", 403, "non-loopback-host"},
		{"0.0.0.0:5273", "", 403, "non-loopback-host"},
		{"evil.example", "https://evil.example", 403, "non-loopback-host"}, // Host is checked first
		{"localhost:5273", "https://evil.example", 403, "cross-origin"},
		{"localhost:5273", "http://localhost:5274", 403, "cross-origin"},
		{"localhost:5273", "http://127.0.0.1:5273", 403, "cross-origin"},
		{"localhost:5273", "HTTP://localhost:5273", 403, "cross-origin"},
		{"localhost:5273", "null", 403, "cross-origin"},
	} {
		h := []string{"Host", c.host}
		if c.origin != "" {
			h = append(h, "Origin", c.origin)
		}
		r := rt.do("GET", "/__dev-toolbar/state", "", h...)
		if r.status != c.status || r.str("reason") != c.reason {
			t.Errorf("Host %q Origin %q: %d %s", c.host, c.origin, r.status, r.raw)
		}
	}
	r := rt.do("GET", "/__dev-toolbar/state", "", "Host", "evil.example:5273")
	expectKeys(t, r.obj, "ok", "reason", "message")
	if want := `Refused: Host "evil.example:5273" is not a loopback name. /__dev-toolbar is reachable over localhost only — this is the DNS-rebinding guard, not a convenience.`; r.str("message") != want {
		t.Errorf("message %q", r.str("message"))
	}
	r = rt.do("POST", "/__dev-toolbar/commands/x", "", "Origin", "https://evil.example")
	if want := `Refused: Origin "https://evil.example" is not this dev server. /__dev-toolbar is a local debugging surface.`; r.str("message") != want {
		t.Errorf("message %q", r.str("message"))
	}
	// Two Origin headers are joined as Node joins them, and so never match.
	host := strings.TrimPrefix(rt.url, "http://")
	r = rt.do("GET", "/__dev-toolbar/state", "", "Origin", "http://"+host, "Origin", "http://"+host)
	expectReason(t, r, 403, "cross-origin")
	// An empty Origin is "absent".
	r = rt.do("GET", "/__dev-toolbar/state", "", "Origin", "")
	expectReason(t, r, 503, "no-page-connected")
}

func TestEveryAnswerIsPrettyJSONWithHeaders(t *testing.T) {
	rt := newRelay(t, Options{TimeoutMs: 30})
	rt.checkIn(body("tab-a", true, miniSnapshot))
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/__dev-toolbar/state", ""},
		{"GET", "/__dev-toolbar/commands", ""},
		{"POST", "/__dev-toolbar/state", "{}"},
		{"POST", "/__dev-toolbar/state", "nope"},
		{"POST", "/__dev-toolbar/commands/x.y", ""},
		{"POST", "/__dev-toolbar/commands/%zz", ""},
		{"GET", "/__dev-toolbar", ""},
	} {
		r := rt.do(c.method, c.path, c.body)
		if r.val == nil {
			t.Fatalf("%s %s: not JSON: %q", c.method, c.path, r.raw)
		}
		if got := string(render(r.val)); got != r.raw {
			t.Errorf("%s %s: not JSON.stringify(body, null, 2)+\"\\n\":\n%s", c.method, c.path, r.raw)
		}
		if ct, cc := r.header.Get("Content-Type"), r.header.Get("Cache-Control"); ct != "application/json; charset=utf-8" || cc != "no-store" {
			t.Errorf("%s %s: content-type %q cache-control %q", c.method, c.path, ct, cc)
		}
		if r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("CORS header sent")
		}
	}
}

func TestUnknownRoutes(t *testing.T) {
	rt := newRelay(t, Options{})
	want := "{\n  \"ok\": false,\n  \"reason\": \"unknown-route\",\n  \"message\": \"No such route: OPTIONS /__dev-toolbar/state\",\n  \"routes\": [\n" +
		"    \"GET /__dev-toolbar/state\",\n    \"GET /__dev-toolbar/commands\",\n    \"POST /__dev-toolbar/commands/:id\",\n" +
		"    \"POST /__dev-toolbar/state (the page checks in here)\"\n  ]\n}\n"
	if r := rt.do("OPTIONS", "/__dev-toolbar/state", ""); r.status != 404 || r.raw != want {
		t.Errorf("OPTIONS: %d\n%s", r.status, r.raw)
	}
	for _, c := range []struct{ method, path, msg string }{
		{"GET", "/__dev-toolbar", "GET /__dev-toolbar"},
		{"GET", "/__dev-toolbar/", "GET /__dev-toolbar/"},
		{"GET", "/__dev-toolbar/state/", "GET /__dev-toolbar/state/"},
		{"GET", "/__dev-toolbar/nope?x=1", "GET /__dev-toolbar/nope"},
		{"POST", "/__dev-toolbar/commands", "POST /__dev-toolbar/commands"},
		{"GET", "/__dev-toolbar/commands/flags.set", "GET /__dev-toolbar/commands/flags.set"},
		{"DELETE", "/__dev-toolbar/state", "DELETE /__dev-toolbar/state"},
		{"PUT", "/__dev-toolbar/commands/x", "PUT /__dev-toolbar/commands/x"},
		{"PATCH", "/__dev-toolbar/commands", "PATCH /__dev-toolbar/commands"},
	} {
		r := rt.do(c.method, c.path, "")
		expectReason(t, r, 404, "unknown-route")
		if r.str("message") != "No such route: "+c.msg || !r.has("routes") {
			t.Errorf("%s %s: %s", c.method, c.path, r.raw)
		}
	}
	// HEAD is not GET: a 404 whose (suppressed) body is unknown-route.
	if r := rt.do("HEAD", "/__dev-toolbar/state", ""); r.status != 404 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("HEAD: %d %v", r.status, r.header)
	}
	// The empty command id is unknown-route without a route list.
	r := rt.do("POST", "/__dev-toolbar/commands/", "")
	expectReason(t, r, 404, "unknown-route")
	expectKeys(t, r.obj, "ok", "reason", "message")
	if r.str("message") != "No command id in the path." {
		t.Errorf("message %q", r.str("message"))
	}
}

func TestOtherPathsGoToUpstreamOrStatic(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream %s %s host=%s", r.Method, r.URL.RequestURI(), r.Host)
	}))
	defer up.Close()
	rt := newRelay(t, Options{Upstream: up.URL})
	host := strings.TrimPrefix(rt.url, "http://")
	for _, p := range []string{"/", "/src/main.ts?t=1", "/__dev-toolbarX/state", "/__dev-toolbar-state"} {
		r := rt.do("GET", p, "")
		if want := "upstream GET " + p + " host=" + host; r.status != 200 || r.raw != want {
			t.Errorf("%s: %d %q, want %q", p, r.status, r.raw, want)
		}
	}
	// Relay routes are not proxied.
	if r := rt.do("GET", "/__dev-toolbar/state", ""); r.str("reason") != "no-page-connected" {
		t.Errorf("relay route proxied: %s", r.raw)
	}
	// The Host guard covers proxied paths too (no DNS rebinding into the dev server).
	expectReason(t, rt.do("GET", "/", "", "Host", "evil.example"), 403, "non-loopback-host")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>fixture</p>"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := newRelay(t, Options{Static: dir})
	if r := st.do("GET", "/index.html", ""); r.status != 200 || r.raw != "<p>fixture</p>" {
		t.Errorf("static: %d %q", r.status, r.raw)
	}
	none := newRelay(t, Options{})
	if r := none.do("GET", "/", ""); r.status != 404 || r.val != nil {
		t.Errorf("no fallback: %d %q", r.status, r.raw)
	}
}

// Spec §4.10 case 1, plus the §8.8 zero-bytes rule.
func TestMalformedCheckInsAreAnswered(t *testing.T) {
	rt := newRelay(t, Options{})
	for _, c := range []struct {
		body   string
		status int
		msg    string
	}{
		{"null", 400, "A check-in body must be a JSON object."},
		{`{"results":{}}`, 400, "`results` must be an array of { token, outcome } objects."},
		{`{"results":null}`, 400, "`results` must be an array of { token, outcome } objects."},
		{`{"results":[null]}`, 200, ""},
		{"[]", 400, "A check-in body must be a JSON object."},
		{"42", 400, "A check-in body must be a JSON object."},
		{`"hi"`, 400, "A check-in body must be a JSON object."},
		{"{", 400, ""},
		{" ", 400, ""},
		{"\n", 400, ""},
		{"", 200, ""},
	} {
		r := rt.checkIn(c.body)
		if r.status != c.status {
			t.Errorf("%q: %d %s", c.body, r.status, r.raw)
			continue
		}
		if c.status == 400 {
			expectReason(t, r, 400, "bad-body")
			expectKeys(t, r.obj, "ok", "reason", "message")
			if c.msg != "" && r.str("message") != c.msg {
				t.Errorf("%q: message %q", c.body, r.str("message"))
			}
		}
	}
}

// Spec §4.10 cases 2, 3, 19.
func TestValidCheckIns(t *testing.T) {
	rt := newRelay(t, Options{})
	for _, b := range []string{
		`{"protocolVersion":2,"instanceId":"playground","allowRun":true,"results":[]}`,
		`{"instanceId":"p","results":[null,7,{"token":"nope"}]}`,
		`{"instanceId":"playground","allowRun":true,"results":[]}`,
		`{"protocolVersion":2.0,"results":[]}`,
	} {
		r := rt.checkIn(b)
		if r.raw != "{\n  \"ok\": true,\n  \"pending\": []\n}\n" {
			t.Errorf("%s: %d %q", b, r.status, r.raw)
		}
	}
}

// Spec §4.10 cases 17 and 18.
func TestProtocolMismatch(t *testing.T) {
	rt := newRelay(t, Options{})
	for _, v := range []string{"1", "3", "99", `"2"`, "null", "2.5"} {
		r := rt.checkIn(`{"protocolVersion":` + v + `,"instanceId":"old","reporterId":"r","allowRun":true,"snapshot":{},"results":[]}`)
		expectReason(t, r, 400, "protocol-mismatch")
		expectKeys(t, r.obj, "ok", "reason", "message", "expected", "received")
		jsonEq(t, r.field("expected"), "2")
		jsonEq(t, r.field("received"), v)
		if !strings.Contains(r.str("message"), "devToolbarAgent.ts") {
			t.Errorf("message %q", r.str("message"))
		}
	}
	// None of them connected a page or stored a snapshot.
	r := rt.do("GET", "/__dev-toolbar/state", "")
	expectReason(t, r, 503, "no-page-connected")
	if !strings.HasPrefix(r.str("message"), "No page has reported") || r.field("connection", "instanceId") != nil {
		t.Errorf("refused check-in was recorded: %s", r.raw)
	}
}

// Spec §4.10 case 4, with the exact never-connected body.
func TestNoPageConnected(t *testing.T) {
	rt := newRelay(t, Options{})
	want := "{\n  \"ok\": false,\n  \"reason\": \"no-page-connected\",\n" +
		"  \"message\": \"No page has reported to /__dev-toolbar yet. Open the app with the agent bridge's `report` option pointed at \\\"/__dev-toolbar/state\\\" — this middleware cannot call the page.\",\n" +
		"  \"connection\": {\n    \"instanceId\": null,\n    \"allowRun\": false,\n    \"connected\": false,\n    \"checkedInAt\": null,\n" +
		"    \"reportedAt\": null,\n    \"ageMs\": null,\n    \"stale\": true,\n    \"staleMs\": 3000,\n    \"reporterId\": null,\n" +
		"    \"reporters\": 0,\n    \"ambiguous\": false\n  }\n}\n"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/__dev-toolbar/state", ""},
		{"GET", "/__dev-toolbar/commands", ""},
		{"POST", "/__dev-toolbar/commands/flags.set", "{}"},
	} {
		if r := rt.do(c.method, c.path, c.body); r.status != 503 || r.raw != want {
			t.Errorf("%s %s: %d\n%s", c.method, c.path, r.status, r.raw)
		}
	}
	// A check-in without a snapshot: GETs still 503, with the check-in age text.
	rt.checkIn(body("tab-a", true, ""))
	r := rt.do("GET", "/__dev-toolbar/state", "")
	expectReason(t, r, 503, "no-page-connected")
	if !regexp.MustCompile(`^The last check-in was \d+ ms ago, older than staleMs \(3000\)\. The tab is probably closed, reloading, or rebuilding\.$`).MatchString(r.str("message")) {
		t.Errorf("message %q", r.str("message"))
	}
	if r.field("connection", "connected") != true {
		t.Errorf("connection %s", r.raw)
	}
}

func TestStaleConnection(t *testing.T) {
	rt := newRelay(t, Options{StaleMs: 300})
	rt.checkIn(body("tab-a", true, miniSnapshot))
	if r := rt.do("GET", "/__dev-toolbar/state", ""); r.field("connection", "connected") != true || r.field("connection", "stale") != false {
		t.Fatalf("fresh: %s", r.raw)
	}
	time.Sleep(400 * time.Millisecond)
	// GETs answer 200 with the stale snapshot (§4.6) …
	r := rt.do("GET", "/__dev-toolbar/state", "")
	if r.status != 200 || r.field("connection", "connected") != false || r.field("connection", "stale") != true ||
		r.field("connection", "reporters") != number("0") {
		t.Errorf("stale GET: %d %s", r.status, r.raw)
	}
	// … the POST refuses at once.
	r = rt.do("POST", "/__dev-toolbar/commands/flags.set", "")
	expectReason(t, r, 503, "no-page-connected")
	if !regexp.MustCompile(`^The last check-in was \d+ ms ago, older than staleMs \(300\)\.`).MatchString(r.str("message")) {
		t.Errorf("message %q", r.str("message"))
	}
}

// The /state body is the snapshot's own keys in the page's order, then connection,
// then extensions; a snapshot's own "connection" or "extensions" keeps its place but
// not its value.
func TestStateBodyOrderAndExtensions(t *testing.T) {
	rt := newRelay(t, Options{})
	snapshot := `{"instanceId":"playground","zeta":1,"connection":"page's own","contractVersion":2,"alpha":{"b":1,"a":2},` +
		`"diagnostics":[{"id":"flags","label":"Flags","status":"ok","data":{"flags":[{"key":"search.rank","effective":9}]}},` +
		`{"id":"agent","label":"Agent","status":"absent"},{"id":"boom","status":"failed","error":"x","data":{"no":1}},` +
		`{"id":"nodata","status":"ok"},{"label":"no id","status":"ok","data":1},null,7,{"id":"flags","status":"ok","data":"second"}],` +
		`"commands":[{"id":"flags.set","label":"Set a feature flag override"}]}`
	before := time.Now().UTC()
	if r := rt.checkIn(body("tab-a", true, snapshot)); r.status != 200 {
		t.Fatal(r.raw)
	}
	r := rt.do("GET", "/__dev-toolbar/state", "")
	if r.status != 200 {
		t.Fatal(r.raw)
	}
	expectKeys(t, r.obj, "instanceId", "zeta", "connection", "contractVersion", "alpha", "diagnostics", "commands", "extensions")
	expectKeys(t, r.field("alpha").(object), "b", "a")
	jsonEq(t, r.field("extensions"), `{"flags":"second","agent":null,"boom":null,"nodata":null}`)

	conn := r.field("connection").(object)
	expectKeys(t, conn, "instanceId", "allowRun", "connected", "checkedInAt", "reportedAt", "ageMs", "stale", "staleMs", "reporterId", "reporters", "ambiguous")
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	checked, _ := conn.get("checkedInAt")
	if !iso.MatchString(checked.(string)) {
		t.Errorf("checkedInAt %v", checked)
	}
	if at, _ := time.Parse(time.RFC3339Nano, checked.(string)); at.Before(before.Truncate(time.Millisecond)) || at.After(time.Now()) {
		t.Errorf("checkedInAt %v not now", at)
	}
	jsonEq(t, object{conn[0], conn[1], conn[2], conn[6], conn[7], conn[8], conn[9], conn[10]},
		`{"instanceId":"playground","allowRun":true,"connected":true,"stale":false,"staleMs":3000,"reporterId":`+strconv.Quote(rt.pub("tab-a"))+`,"reporters":1,"ambiguous":false}`)
	if age, _ := conn.get("ageMs"); age == nil {
		t.Errorf("ageMs %v", age)
	}

	c := rt.do("GET", "/__dev-toolbar/commands", "")
	expectKeys(t, c.obj, "instanceId", "allowRun", "connection", "commands")
	jsonEq(t, c.field("commands"), `[{"id":"flags.set","label":"Set a feature flag override"}]`)
	jsonEq(t, c.field("instanceId"), `"playground"`)

	// A snapshot without commands or instanceId: [] and null.
	rt.checkIn(`{"reporterId":"tab-b","allowRun":false,"snapshot":{"x":1},"results":[]}`)
	c = rt.do("GET", "/__dev-toolbar/commands", "")
	jsonEq(t, c.field("commands"), `[]`)
	jsonEq(t, c.field("instanceId"), `null`)
	jsonEq(t, c.field("allowRun"), `false`)
	s := rt.do("GET", "/__dev-toolbar/state", "")
	expectKeys(t, s.obj, "x", "connection", "extensions")
	jsonEq(t, s.field("extensions"), `{}`)
	// instanceId is sticky: the last string one seen.
	jsonEq(t, s.field("connection", "instanceId"), `"playground"`)
}

// Spec §4.10 case 8.
func TestTwoReportersAreReportedNotBlended(t *testing.T) {
	rt := newRelay(t, Options{})
	rt.checkIn(body("tab-a", true, snapshotOf("tab-a")))
	rt.checkIn(body("tab-b", true, snapshotOf("tab-b")))
	rt.checkIn(body("", true, "")) // id-less pages share "anonymous"
	r := rt.do("GET", "/__dev-toolbar/state", "")
	jsonEq(t, r.field("connection", "reporters"), "3")
	jsonEq(t, r.field("connection", "ambiguous"), "true")
	jsonEq(t, r.field("connection", "reporterId"), strconv.Quote(rt.pub("tab-b")))
	jsonEq(t, r.field("extensions", "who"), `"tab-b"`)
	// reporterId follows snapshot-carrying check-ins only, and is null for an id-less one.
	rt.checkIn(`{"allowRun":true,"snapshot":{"a":1},"results":[]}`)
	r = rt.do("GET", "/__dev-toolbar/state", "")
	jsonEq(t, r.field("connection", "reporterId"), `null`)
}

// Spec §4.10 case 5, and decodeURIComponent's refusal of escapes that are not UTF-8.
func TestCommandIDs(t *testing.T) {
	rt := newRelay(t, Options{TimeoutMs: 20})
	for _, p := range []string{"%E0%A4%A", "%zz", "%FF", "a%2", "%ED%A0%80"} {
		r := rt.do("POST", "/__dev-toolbar/commands/"+p, "")
		expectReason(t, r, 400, "bad-command-id")
		if r.str("message") != "The command id in the path is not valid percent-encoding: "+p {
			t.Errorf("message %q", r.str("message"))
		}
	}
	rt.checkIn(body("tab-a", true, ""))
	ch := rt.async("POST", "/__dev-toolbar/commands/a%2Fb/c%20d?reporter=", "")
	rt.waitQueued(1)
	p := pending(t, rt.checkIn(body("tab-a", true, "")))
	jsonEq(t, p[0], fmt.Sprintf(`{"token":%q,"id":"a/b/c d"}`, tokenOf(p[0])))
	recv(t, ch, time.Second)
}

func TestCommandBodies(t *testing.T) {
	rt := newRelay(t, Options{TimeoutMs: 50})
	rt.checkIn(body("tab-a", true, ""))
	for _, c := range []struct{ body, entry string }{
		{"", `{"id":"x"}`},
		{" \n\t ", `{"id":"x"}`},
		{"\ufeff{}", `{"id":"x","input":{}}`},
		{"null", `{"id":"x","input":null}`},
		{`{"key":"search.rank","value":9}`, `{"id":"x","input":{"key":"search.rank","value":9}}`},
		{`[1,"two"]`, `{"id":"x","input":[1,"two"]}`},
	} {
		ch := rt.async("POST", "/__dev-toolbar/commands/x", c.body)
		rt.waitQueued(1)
		p := pending(t, rt.checkIn(body("tab-a", true, "")))
		entry := p[0].clone()
		if tok := tokenOf(entry); !regexp.MustCompile(`^c\d+-[0-9a-f]{32}$`).MatchString(tok) {
			t.Errorf("token %q", tok)
		}
		entry = entry[1:]
		jsonEq(t, entry, c.entry)
		rt.checkIn(body("tab-a", true, "", result(tokenOf(p[0]), `{"ok":true}`)))
		recv(t, ch, time.Second)
	}
	r := rt.do("POST", "/__dev-toolbar/commands/x", "{nope")
	expectReason(t, r, 400, "bad-body")
	if !strings.HasPrefix(r.str("message"), "The request body must be JSON (the command's input) or empty: ") {
		t.Errorf("message %q", r.str("message"))
	}
	rt.waitQueued(0)
}

// Spec §4.10 case 10 and the §4.7 response shape.
func TestCommandRoundTrip(t *testing.T) {
	rt := newRelay(t, Options{})
	rt.checkIn(body("tab-a", true, miniSnapshot))
	ch := rt.async("POST", "/__dev-toolbar/commands/flags.set", `{"key":"beta","value":true}`)
	rt.waitQueued(1)
	p := pending(t, rt.checkIn(body("tab-a", true, "")))
	if len(p) != 1 {
		t.Fatalf("pending %v", p)
	}
	expectKeys(t, p[0], "token", "id", "input")
	jsonEq(t, p[0][1:], `{"id":"flags.set","input":{"key":"beta","value":true}}`)
	// The result's check-in is answered like any other.
	r := rt.checkIn(body("tab-a", true, miniSnapshot, result(tokenOf(p[0]), `{"ok":true,"result":"was false"}`)))
	if r.raw != "{\n  \"ok\": true,\n  \"pending\": []\n}\n" {
		t.Errorf("result check-in: %s", r.raw)
	}
	got := recv(t, ch, time.Second)
	if got.status != 200 {
		t.Fatalf("%d %s", got.status, got.raw)
	}
	expectKeys(t, got.obj, "ok", "result", "command", "ranIn", "waitedMs")
	jsonEq(t, got.obj[:4], `{"ok":true,"result":"was false","command":"flags.set","ranIn":`+strconv.Quote(rt.pub("tab-a"))+`}`)
	if _, ok := got.field("waitedMs").(number); !ok {
		t.Errorf("waitedMs %v", got.field("waitedMs"))
	}
}

// statusFor, and an outcome's own command/ranIn/waitedMs keys keep their place.
func TestOutcomeStatuses(t *testing.T) {
	rt := newRelay(t, Options{})
	rt.checkIn(body("", true, ""))
	for _, c := range []struct {
		outcome string
		status  int
		keys    []string
	}{
		{`{"ok":true}`, 200, []string{"ok", "command", "ranIn", "waitedMs"}},
		{`{"ok":false,"reason":"unknown-command"}`, 404, nil},
		{`{"ok":false,"reason":"run-not-allowed"}`, 403, nil},
		{`{"ok":false,"reason":"torn-down"}`, 409, nil},
		{`{"ok":false,"reason":"threw","error":"\"new-header\" is a boolean flag","errorName":"Error"}`, 422,
			[]string{"ok", "reason", "error", "errorName", "command", "ranIn", "waitedMs"}},
		{`{"ok":false,"reason":"something-new"}`, 502, nil},
		{`{"ok":false}`, 502, nil},
		{`{"ranIn":"page","ok":1}`, 502, []string{"ranIn", "ok", "command", "waitedMs"}},
		{`null`, 502, []string{"ok", "reason", "command", "ranIn", "waitedMs"}},
		{`[{"ok":true}]`, 502, []string{"ok", "reason", "command", "ranIn", "waitedMs"}},
		{`"ok"`, 502, []string{"ok", "reason", "command", "ranIn", "waitedMs"}},
	} {
		ch := rt.async("POST", "/__dev-toolbar/commands/x.y", "")
		rt.waitQueued(1)
		tok := tokenOf(pending(t, rt.checkIn(body("", true, "")))[0])
		rt.checkIn(body("", true, "", result(tok, c.outcome)))
		r := recv(t, ch, time.Second)
		if r.status != c.status {
			t.Errorf("%s: %d %s", c.outcome, r.status, r.raw)
		}
		if c.keys != nil {
			expectKeys(t, r.obj, c.keys...)
		}
		if r.str("ranIn") != "anonymous" || r.str("command") != "x.y" {
			t.Errorf("%s: %s", c.outcome, r.raw)
		}
		if strings.HasPrefix(c.outcome, "{") {
			continue
		}
		expectReason(t, r, 502, "no-outcome")
	}
	// An entry with no outcome key at all.
	ch := rt.async("POST", "/__dev-toolbar/commands/x.y", "")
	rt.waitQueued(1)
	tok := tokenOf(pending(t, rt.checkIn(body("", true, "")))[0])
	rt.checkIn(body("", true, "", fmt.Sprintf(`{"token":%q}`, tok)))
	expectReason(t, recv(t, ch, time.Second), 502, "no-outcome")
}

// Spec §4.10 cases 11 and 12, and FIFO hand-out of concurrent commands.
func TestQueue(t *testing.T) {
	rt := newRelay(t, Options{TimeoutMs: 300})
	rt.checkIn(body("tab-a", true, ""))
	var chans []chan resp
	for i := 0; i < 3; i++ {
		chans = append(chans, rt.async("POST", fmt.Sprintf("/__dev-toolbar/commands/cmd.%d", i), ""))
		rt.waitQueued(i + 1)
	}
	p := pending(t, rt.checkIn(body("tab-a", true, "")))
	if len(p) != 3 {
		t.Fatalf("pending %d", len(p))
	}
	seqs := map[string]bool{}
	for i, e := range p {
		jsonEq(t, e[1].val, fmt.Sprintf(`"cmd.%d"`, i))
		seqs[strings.SplitN(tokenOf(e), "-", 2)[0]] = true
	}
	if len(seqs) != 3 {
		t.Errorf("tokens not distinct: %v", p)
	}
	if again := pending(t, rt.checkIn(body("tab-b", true, ""))); len(again) != 0 {
		t.Errorf("a picked-up command was handed out twice: %v", again)
	}
	// Results in any order settle their own callers, but only from the page the
	// commands were handed to: tab-b's answer for tab-a's commands is ignored.
	rt.checkIn(body("tab-b", true, "", result(tokenOf(p[2]), `{"ok":true,"result":"forged"}`)))
	notYet(t, chans[2], 50*time.Millisecond)
	rt.checkIn(body("tab-a", true, "", result(tokenOf(p[2]), `{"ok":true,"result":2}`), result(tokenOf(p[0]), `{"ok":true,"result":0}`)))
	for _, i := range []int{2, 0} {
		r := recv(t, chans[i], time.Second)
		jsonEq(t, r.field("result"), fmt.Sprint(i))
		jsonEq(t, r.field("ranIn"), strconv.Quote(rt.pub("tab-a")))
	}
	// The unanswered one times out, and its late result is ignored.
	r := recv(t, chans[1], time.Second)
	expectReason(t, r, 504, "timeout")
	if got := rt.checkIn(body("tab-a", true, "", result(tokenOf(p[1]), `{"ok":true}`))); got.status != 200 {
		t.Errorf("late result: %s", got.raw)
	}

	// allowRun: false refuses and queues nothing.
	rt.checkIn(body("tab-a", false, ""))
	r = rt.do("POST", "/__dev-toolbar/commands/flags.set", `{"key":"a"}`)
	expectReason(t, r, 403, "run-not-allowed")
	expectKeys(t, r.obj, "ok", "reason", "message", "connection")
	if r.str("message") != "The connected page's bridge was built with allowRun: false, so it carries no runCommand. Pass `agentBridge({ allowRun: true })` to enable this route." {
		t.Errorf("message %q", r.str("message"))
	}
	if p := pending(t, rt.checkIn(body("tab-a", false, ""))); len(p) != 0 {
		t.Errorf("refused command queued: %v", p)
	}
}

// Spec §4.10 cases 13 and 14.
func TestTimeouts(t *testing.T) {
	rt := newRelay(t, Options{TimeoutMs: 400})
	rt.checkIn(body("tab-a", true, ""))
	r := rt.do("POST", "/__dev-toolbar/commands/slow.command", "")
	expectReason(t, r, 504, "timeout")
	expectKeys(t, r.obj, "ok", "reason", "message", "pickedUp", "waitedMs", "command", "connection")
	jsonEq(t, r.obj[3:6], fmt.Sprintf(`{"pickedUp":false,"waitedMs":%s,"command":"slow.command"}`, r.field("waitedMs")))
	if want := `No page picked up "slow.command" within 400 ms. The bridge polls this route; is the tab open and the reporter running?`; r.str("message") != want {
		t.Errorf("message %q", r.str("message"))
	}
	if w, _ := strconv.Atoi(string(r.field("waitedMs").(number))); w < 400 {
		t.Errorf("waitedMs %d", w)
	}

	ch := rt.async("POST", "/__dev-toolbar/commands/slow.command", "")
	rt.waitQueued(1)
	pending(t, rt.checkIn(body("tab-a", true, "")))
	r = recv(t, ch, time.Second)
	expectReason(t, r, 504, "timeout")
	expectKeys(t, r.obj, "ok", "reason", "message", "pickedUp", "handedOut", "waitedMs", "command", "connection")
	jsonEq(t, r.obj[3:5], `{"pickedUp":false,"handedOut":true}`)
	if want := `The page was handed "slow.command" `; !strings.HasPrefix(r.str("message"), want) {
		t.Errorf("message %q", r.str("message"))
	}
}

// Issues 22.2 and 22.3: pickedUp true only for a command the page showed it
// received, by reporting on a command of the same answer. A page that takes a
// batch and drops it (its reporter stopped, or it gave up reading the answer and
// checks in again as if nothing came) leaves its callers with pickedUp false and
// handedOut true; a check-in without their results is no sign of receipt.
func TestPickedUpOnlyWhatThePageTook(t *testing.T) {
	rt := newRelay(t, Options{TimeoutMs: 500})
	rt.checkIn(body("tab-a", true, ""))
	a := rt.async("POST", "/__dev-toolbar/commands/dropped.one", "")
	rt.waitQueued(1)
	b := rt.async("POST", "/__dev-toolbar/commands/dropped.two", "")
	rt.waitQueued(2)
	if p := pending(t, rt.checkIn(body("tab-a", true, ""))); len(p) != 2 {
		t.Fatalf("handed %d", len(p))
	}
	// The page checks in again, and again, reporting nothing: it never read them.
	rt.checkIn(body("tab-a", true, ""))
	rt.checkIn(body("tab-a", true, "", result("c0-unknown", `{"ok":true}`)))
	for _, ch := range []chan resp{a, b} {
		r := recv(t, ch, 2*time.Second)
		expectReason(t, r, 504, "timeout")
		jsonEq(t, r.obj[3:5], `{"pickedUp":false,"handedOut":true}`)
	}

	// Two handed in one answer, the first reported: the page read that answer, so
	// the second was taken (it may be running it).
	one := rt.async("POST", "/__dev-toolbar/commands/one", "")
	rt.waitQueued(1)
	two := rt.async("POST", "/__dev-toolbar/commands/two", "")
	rt.waitQueued(2)
	p := pending(t, rt.checkIn(body("tab-a", true, "")))
	if len(p) != 2 {
		t.Fatalf("handed %d", len(p))
	}
	// A third, handed in the answer to that report, is not known to be taken.
	three := rt.async("POST", "/__dev-toolbar/commands/three", "")
	rt.waitQueued(3)
	if p3 := pending(t, rt.checkIn(body("tab-a", true, "", result(tokenOf(p[0]), `{"ok":true}`)))); len(p3) != 1 {
		t.Fatalf("handed %d after the report", len(p3))
	}
	if r := recv(t, one, time.Second); r.status != 200 {
		t.Fatalf("one: %s", r.raw)
	}
	r := recv(t, two, 2*time.Second)
	expectReason(t, r, 504, "timeout")
	expectKeys(t, r.obj, "ok", "reason", "message", "pickedUp", "waitedMs", "command", "connection")
	jsonEq(t, r.field("pickedUp"), "true")
	if want := `The page picked up "two" but did not report a result within 500 ms.`; r.str("message") != want {
		t.Errorf("message %q", r.str("message"))
	}
	r = recv(t, three, 2*time.Second)
	expectReason(t, r, 504, "timeout")
	jsonEq(t, r.obj[3:5], `{"pickedUp":false,"handedOut":true}`)
}

// §4.12: the deadline restarts at pickup, and whenever the page holding a command
// posts a result, so a command queued behind a slow one is not timed out.
func TestDeadlineRestarts(t *testing.T) {
	// Every step below has ≥ 200 ms of slack before a deadline, for a loaded CI
	// machine; "restarted or not" is also read from the timer's generation.
	const timeout = 600
	rt := newRelay(t, Options{TimeoutMs: timeout})
	rt.checkIn(body("tab-a", true, ""))
	start := time.Now()
	at := func(ms int) { time.Sleep(time.Until(start.Add(time.Duration(ms) * time.Millisecond))) }
	ch := rt.async("POST", "/__dev-toolbar/commands/first", "")
	rt.waitQueued(1)
	ch2 := rt.async("POST", "/__dev-toolbar/commands/second", "")
	rt.waitQueued(2)
	gen := func(id string) int {
		rt.s.mu.Lock()
		defer rt.s.mu.Unlock()
		for _, c := range rt.s.state.queue {
			if c.id == id {
				return c.gen
			}
		}
		t.Fatalf("%s is not waiting", id)
		return 0
	}
	at(300)
	p := pending(t, rt.checkIn(body("tab-a", true, ""))) // pickup at ~300 ms: deadline now ~900 ms
	if len(p) != 2 {
		t.Fatalf("pending %d", len(p))
	}
	at(700)
	// Past the POST-time deadline (600 ms), both still wait.
	notYet(t, ch, 0)
	notYet(t, ch2, 0)
	// A result from the holder at ~700 ms restarts the other's deadline to ~1300 ms.
	before := gen("second")
	rt.checkIn(body("tab-a", true, "", result(tokenOf(p[0]), `{"ok":true}`)))
	if r := recv(t, ch, time.Second); r.status != 200 {
		t.Fatalf("first: %s", r.raw)
	}
	if g := gen("second"); g != before+1 {
		t.Errorf("the holder's result did not restart the deadline (generation %d → %d)", before, g)
	}
	notYet(t, ch2, time.Until(start.Add(1100*time.Millisecond)))
	// A result from another page does not restart it.
	before = gen("second")
	rt.checkIn(body("tab-b", true, "", result("c999-1", `{"ok":true}`)))
	if g := gen("second"); g != before {
		t.Errorf("another page's result restarted the deadline (generation %d → %d)", before, g)
	}
	r := recv(t, ch2, 2*time.Second)
	expectReason(t, r, 504, "timeout")
	jsonEq(t, r.field("pickedUp"), "true")
	if el := time.Since(start); el < 1250*time.Millisecond || el > 3*time.Second {
		t.Errorf("second timed out after %v, want ~1300ms", el)
	}
}

// Spec §4.10 case 15, over a real listener: every waiting caller is answered with
// 503 server-closing before the listener closes, and held check-ins are released.
func TestShutdownAnswersEveryWaitingCaller(t *testing.T) {
	s, err := New(Options{Listen: "127.0.0.1:0", TimeoutMs: 60000, LongPollMs: 4000})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Listen(); again.String() != addr.String() {
		t.Errorf("second Listen: %v", again)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	rt := &relayT{t: t, s: s, url: "http://" + addr.String()}
	rt.checkIn(body("tab-a", true, "", result("c0-0", "{}"))) // a result: not held
	a := rt.async("POST", "/__dev-toolbar/commands/one", "")
	b := rt.async("POST", "/__dev-toolbar/commands/two", `{"x":1}`)
	rt.waitQueued(2)
	held := rt.async("POST", "/__dev-toolbar/state", body("tab-b", true, ""))
	// tab-b's check-in picks both up; the next is held.
	r := recv(t, held, time.Second)
	if len(pending(t, r)) != 2 {
		t.Fatalf("pickup: %s", r.raw)
	}
	held = rt.async("POST", "/__dev-toolbar/state", body("tab-c", true, ""))
	rt.waitHeld(1)

	cancel()
	// Both were handed to tab-b, which never reports (so it never showed it
	// received them): after the grace they are answered, saying so.
	for _, ch := range []chan resp{a, b} {
		r := recv(t, ch, ShutdownGrace+2*time.Second)
		expectReason(t, r, 503, "server-closing")
		expectKeys(t, r.obj, "ok", "reason", "message", "pickedUp", "handedOut", "waitedMs")
		jsonEq(t, r.obj[3:5], `{"pickedUp":false,"handedOut":true}`)
		if !strings.HasPrefix(r.str("message"), "The dev server shut down before the page answered.") {
			t.Errorf("message %q", r.str("message"))
		}
	}
	if r := recv(t, held, 2*time.Second); r.raw != "{\n  \"ok\": true,\n  \"pending\": []\n}\n" {
		t.Errorf("held check-in: %d %s", r.status, r.raw)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(ShutdownGrace + 3*time.Second):
		t.Fatal("Serve did not return")
	}
	if r := rt.do("GET", "/__dev-toolbar/state", ""); r.status != -1 {
		t.Errorf("still serving: %d", r.status)
	}
}

// Issue 10.5: a shutdown under load does not lie. Nothing is handed out once it
// starts; a command no page took is answered at once, pickedUp false (safe to
// retry); a command a page took gets the grace to report, and its result reaches
// its caller; one never reported is answered pickedUp true after the grace.
func TestShutdownSaysWhetherPickedUp(t *testing.T) {
	rt := serveRelay(t, Options{TimeoutMs: 60000, LongPollMs: 4000})
	rt.checkIn(body("tab-a", true, "", result("c0-0", "{}")))
	rt.checkIn(body("tab-b", true, "", result("c0-0", "{}")))
	one := rt.async("POST", "/__dev-toolbar/commands/one?reporter=tab-a", "")
	never := rt.async("POST", "/__dev-toolbar/commands/never?reporter=tab-a", "")
	rt.waitQueued(2)
	taken := pending(t, rt.checkIn(body("tab-a", true, "", result("c0-0", "{}"))))
	if len(taken) != 2 {
		t.Fatalf("tab-a took %d", len(taken))
	}
	queued := rt.async("POST", "/__dev-toolbar/commands/queued?reporter=tab-b", "")
	rt.waitQueued(3)

	stopped := make(chan struct{})
	go func() { rt.stop(); close(stopped) }()
	r := recv(t, queued, time.Second)
	expectReason(t, r, 503, "server-closing")
	jsonEq(t, r.field("pickedUp"), "false")
	rt.waitQueued(2)
	// Closing: tab-b checks in and is handed nothing; a new command is refused.
	if p := pending(t, rt.checkIn(body("tab-b", true, "", result("c0-0", "{}")))); len(p) != 0 {
		t.Errorf("handed out while closing: %v", p)
	}
	r = rt.do("POST", "/__dev-toolbar/commands/late?reporter=tab-b", "")
	expectReason(t, r, 503, "server-closing")
	jsonEq(t, r.field("pickedUp"), "false")
	// tab-a reports the first within the grace: its caller gets the result.
	for _, c := range taken {
		if id, _ := c.get("id"); id == "one" {
			rt.checkIn(body("tab-a", true, "", result(tokenOf(c), `{"ok":true,"result":1}`)))
		}
	}
	r = recv(t, one, time.Second)
	if r.status != 200 || r.str("command") != "one" {
		t.Errorf("one: %d %s", r.status, r.raw)
	}
	r = recv(t, never, ShutdownGrace+2*time.Second)
	expectReason(t, r, 503, "server-closing")
	jsonEq(t, r.field("pickedUp"), "true")
	<-stopped
}

// Issue 10.5 / 11.3: the relay's own refresh probe is no caller's command, so a
// shutdown does not wait for it. A page that took a probe and a command: the
// probe is settled at once, the command alone gets the grace (and reports in it).
func TestShutdownDoesNotWaitForAProbe(t *testing.T) {
	rt := serveRelay(t, Options{TimeoutMs: 60000, LongPollMs: 4000, RefreshMs: DefaultRefreshMs})
	rt.checkIn(body("tab-a", true, miniSnapshot, result("c0-0", "{}")))
	held := rt.async("POST", "/__dev-toolbar/state", body("tab-a", true, ""))
	rt.waitHeld(1)
	get := rt.async("GET", "/__dev-toolbar/state?reporter=tab-a", "")
	p := pending(t, recv(t, held, 2*time.Second))
	if len(p) != 1 {
		t.Fatalf("the held page was handed %v, want the probe", p)
	}
	if id, _ := p[0].get("id"); id != probeID {
		t.Fatalf("the held page was handed %v, want the probe", p)
	}
	one := rt.async("POST", "/__dev-toolbar/commands/one?reporter=tab-a", "")
	rt.waitQueued(2)
	taken := pending(t, rt.checkIn(body("tab-a", true, "")))
	if len(taken) != 1 {
		t.Fatalf("tab-a took %v", taken)
	}

	stopped := make(chan struct{})
	go func() { rt.stop(); close(stopped) }()
	rt.waitQueued(1) // the probe is gone; the caller's command waits its grace
	recv(t, get, 2*time.Second)
	rt.checkIn(body("tab-a", true, "", result(tokenOf(taken[0]), `{"ok":true}`)))
	if r := recv(t, one, time.Second); r.status != 200 {
		t.Errorf("one: %d %s", r.status, r.raw)
	}
	<-stopped
}

func TestPanicIsMiddlewareError(t *testing.T) {
	var logged []string
	rt := newRelay(t, Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	rt.s.hook = func(route string) {
		if route == "POST /__dev-toolbar/state" {
			panic("boom")
		}
	}
	r := rt.checkIn("{}")
	expectReason(t, r, 500, "middleware-error")
	expectKeys(t, r.obj, "ok", "reason", "message")
	if r.str("message") != "The dev-toolbar middleware threw while handling this request: boom" || len(logged) != 1 ||
		!strings.Contains(logged[0], "panicked: boom") {
		t.Errorf("%s / %v", r.raw, logged)
	}
	// The relay still works.
	if r := rt.do("GET", "/__dev-toolbar/state", ""); r.status != 503 {
		t.Errorf("after panic: %d", r.status)
	}
}

func TestDuplicateSnapshotsAreTolerated(t *testing.T) {
	rt := newRelay(t, Options{})
	for i := 0; i < 3; i++ {
		if r := rt.checkIn(body("tab-a", true, miniSnapshot)); r.status != 200 {
			t.Fatal(r.raw)
		}
	}
	if r := rt.do("GET", "/__dev-toolbar/state", ""); r.status != 200 || r.field("connection", "reporters") != number("1") {
		t.Errorf("%s", r.raw)
	}
}

func TestRequestLog(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	rt := newRelay(t, Options{Logf: func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	rt.checkIn(body("tab-a", true, miniSnapshot))
	rt.checkIn(body("tab-a", true, ""))
	rt.checkIn("nope")
	rt.do("GET", "/__dev-toolbar/state?reporter=tab-a", "")
	want := []string{
		`^relay: page "p-[0-9a-f]{20}" checked in for the first time$`,
		`^relay: POST /__dev-toolbar/state 400 \(\d+ ms\)$`,
		`^relay: GET /__dev-toolbar/state\?reporter=tab-a 200 \(\d+ ms\)$`,
	}
	// A request is logged once its handler returns, which can be just after its
	// client has the answer: wait for the lines, a missing or extra one still fails.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(logged)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != len(want) {
		t.Fatalf("logged %q", logged)
	}
	// Each line once, in any order: the lines of two requests are written as
	// their handlers return, which need not be the order of their answers.
	for _, w := range want {
		n := 0
		for _, l := range logged {
			if regexp.MustCompile(w).MatchString(l) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lines match %s in %q", n, w, logged)
		}
	}
}

// Issue 10.9: --static serves only regular files inside its folder: a symbolic
// link that leaves it (to a file or a directory) is refused, one that stays inside
// is followed, and a directory is its index.html or nothing (no listing).
func TestStaticNeverLeavesItsFolder(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", "<p>home</p>")
	write("sub/page.html", "<p>page</p>")
	write("listed/a.txt", "a")
	for link, target := range map[string]string{
		"leak.txt":     secret,
		"leakdir":      outside,
		"sub/up.txt":   "../../" + filepath.Base(outside) + "/secret.txt",
		"passwd":       "/etc/passwd",
		"inside.html":  "sub/page.html",
		"sub/back.txt": "../index.html",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	rt := newRelay(t, Options{Static: dir})
	for path, want := range map[string]string{
		"/": "<p>home</p>", "/index.html": "<p>home</p>", "/sub/page.html": "<p>page</p>",
		"/inside.html": "<p>page</p>", "/sub/back.txt": "<p>home</p>",
	} {
		if r := rt.do("GET", path, ""); r.status != 200 || r.raw != want {
			t.Errorf("%s: %d %q", path, r.status, r.raw)
		}
	}
	for path, status := range map[string]int{
		"/leak.txt": 403, "/leakdir/secret.txt": 403, "/leakdir/": 403, "/sub/up.txt": 403, "/passwd": 403,
		"/../../etc/passwd": 404, "/%2e%2e/secret.txt": 404, "/listed/": 404, "/listed": 404, "/sub": 404,
	} {
		r := rt.do("GET", path, "")
		if r.status != status || strings.Contains(r.raw, "secret") || strings.Contains(r.raw, "root:") || strings.Contains(r.raw, "a.txt") {
			t.Errorf("%s: %d %q, want %d", path, r.status, r.raw, status)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err == nil {
		done := make(chan resp, 1)
		go func() { done <- rt.do("GET", "/fifo", "") }()
		if r := recv(t, done, 5*time.Second); r.status != 403 {
			t.Errorf("fifo: %d %q", r.status, r.raw)
		}
	}
}

// Issue 22.5: a relay on "localhost" holds 127.0.0.1 and ::1 on its port (a
// browser may reach either under that name), so a second relay on either address
// of that port cannot start beside it, in either order.
func TestLocalhostTakesEveryLoopbackAddress(t *testing.T) {
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback here")
	} else {
		ln.Close()
	}
	a, err := New(Options{Listen: "localhost:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := a.Listen()
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(addr.(*net.TCPAddr).Port)
	for _, other := range []string{"[::1]:" + port, "127.0.0.1:" + port} {
		b, err := New(Options{Listen: other})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Listen()
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Reason != "port-in-use" {
			t.Errorf("a relay on %s beside one on localhost:%s: %v", other, port, err)
		}
	}
	// The other order: a relay on [::1] first, then one on localhost.
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, _ := New(Options{Listen: "localhost:" + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)})
	_, err = c.Listen()
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Reason != "port-in-use" || !strings.Contains(oe.Message, "[::1]") {
		t.Errorf("localhost beside [::1]: %v", err)
	}
	// Both addresses are served.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	for _, host := range []string{"127.0.0.1", "[::1]"} {
		res, err := http.Get("http://" + host + ":" + port + "/__dev-toolbar/state")
		if err != nil {
			t.Errorf("%s: %v", host, err)
			continue
		}
		res.Body.Close()
		if res.StatusCode != 503 {
			t.Errorf("%s: %d", host, res.StatusCode)
		}
	}
	cancel()
	<-done
}

// Issue 22.3: two results that each fit, in one check-in over the cap (the page
// re-sends its outbox after a check-in that failed: here a result delivered
// before, then two new ones), are both delivered; none is refused
// result-too-large because others rode with it.
func TestResultsThatFitAreNeverTooLarge(t *testing.T) {
	rt := newRelay(t, Options{})
	rt.checkIn(body("tab-a", true, ""))
	var chans []chan resp
	for i := 0; i < 3; i++ {
		chans = append(chans, rt.async("POST", "/__dev-toolbar/commands/demo.echo", fmt.Sprintf(`{"i":%d}`, i)))
		rt.waitQueued(i + 1)
	}
	p := pending(t, rt.checkIn(body("tab-a", true, "")))
	if len(p) != 3 {
		t.Fatalf("handed %d", len(p))
	}
	echo := func(i int) string {
		return fmt.Sprintf(`{"ok":true,"result":{"i":%d,"s":"%s"}}`, i, strings.Repeat("e", 3<<20+512<<10))
	}
	rt.checkIn(body("tab-a", true, "", result(tokenOf(p[0]), echo(0))))
	if r := recv(t, chans[0], time.Second); r.status != 200 {
		t.Fatalf("first: %d %.200s", r.status, r.raw)
	}
	r := rt.checkIn(body("tab-a", true, "", result(tokenOf(p[0]), echo(0)), result(tokenOf(p[1]), echo(1)), result(tokenOf(p[2]), echo(2))))
	if r.status != 200 {
		t.Fatalf("the page's check-in: %d %.200s", r.status, r.raw)
	}
	for i, ch := range chans[1:] {
		r := recv(t, ch, time.Second)
		if r.status != 200 || fmt.Sprint(r.field("result", "i")) != fmt.Sprint(i+1) {
			t.Errorf("result %d: %d %.200s", i+1, r.status, r.raw)
		}
	}
}
