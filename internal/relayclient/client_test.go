package relayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// connection is a §4.5 connection object, keys in the relay's order.
const connection = `{"instanceId":"playground","allowRun":true,"connected":true,"checkedInAt":"2026-09-03T10:15:02.512Z","reportedAt":"2026-09-03T10:15:01.007Z","ageMs":1620,"stale":false,"staleMs":3000,"reporterId":"tab-a","reporters":1,"ambiguous":false}`

const staleConnection = `{"instanceId":"playground","allowRun":true,"connected":false,"checkedInAt":"2026-09-03T10:15:02.512Z","reportedAt":"2026-09-03T10:15:01.007Z","ageMs":9620,"stale":true,"staleMs":3000,"reporterId":"tab-a","reporters":1,"ambiguous":false}`

// relayJSON writes body the way the relay does (§4.3): pretty-printed with two
// spaces and a trailing newline, JSON content type, no-store.
func relayJSON(w http.ResponseWriter, status int, body string) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(body), "", "  "); err != nil {
		panic("test body is not JSON: " + err.Error() + ": " + body)
	}
	buf.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// call is one client method.
type call func(ctx context.Context, c *Client) (json.RawMessage, error)

var (
	getState    call = func(ctx context.Context, c *Client) (json.RawMessage, error) { return c.State(ctx, "") }
	getCommands call = func(ctx context.Context, c *Client) (json.RawMessage, error) { return c.Commands(ctx, "") }
	postRun     call = func(ctx context.Context, c *Client) (json.RawMessage, error) {
		return c.Run(ctx, "flags.set", json.RawMessage(`{"key":"new-header","value":"yes"}`), "")
	}
)

// Every row of spec §4.9 other than 200, with the relay's own bodies.
func TestRelayRefusalsAndOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		call       call
		status     int
		body       string
		reason     string
		exit       int
		message    string            // the error's message
		details    map[string]string // detail key → JSON it must hold
		notDetails []string          // keys that must not be details
	}{
		{
			name: "400 bad-body", call: postRun, status: 400,
			body:   `{"ok":false,"reason":"bad-body","message":"The request body must be JSON (the command's input) or empty: Unexpected token } in JSON at position 1"}`,
			reason: "bad-body", exit: 2,
			message:    "The request body must be JSON (the command's input) or empty: Unexpected token } in JSON at position 1",
			details:    map[string]string{"status": "400"},
			notDetails: []string{"message", "ok", "reason"},
		},
		{
			name: "400 bad-command-id", call: postRun, status: 400,
			body:   `{"ok":false,"reason":"bad-command-id","message":"The command id in the path is not valid percent-encoding: %E0%A4%A"}`,
			reason: "bad-command-id", exit: 2,
			message: "The command id in the path is not valid percent-encoding: %E0%A4%A",
			details: map[string]string{"status": "400"},
		},
		{
			name: "400 protocol-mismatch (newer relay)", call: getState, status: 400,
			body:   `{"ok":false,"reason":"protocol-mismatch","message":"This page speaks protocol 1 but devToolbarAgent.ts speaks 2.","expected":2,"received":1}`,
			reason: "protocol-mismatch", exit: 6,
			message: "This page speaks protocol 1 but devToolbarAgent.ts speaks 2.",
			details: map[string]string{"expected": "2", "received": "1", "status": "400"},
		},
		{
			name: "403 non-loopback-host", call: getState, status: 403,
			body:   `{"ok":false,"reason":"non-loopback-host","message":"Refused: Host \"0.0.0.0:5273\" is not a loopback name. /__dev-toolbar is reachable over localhost only — this is the DNS-rebinding guard, not a convenience."}`,
			reason: "non-loopback-host", exit: 6,
			message: `Refused: Host "0.0.0.0:5273" is not a loopback name. /__dev-toolbar is reachable over localhost only — this is the DNS-rebinding guard, not a convenience.`,
			details: map[string]string{"status": "403"},
		},
		{
			name: "403 cross-origin", call: getCommands, status: 403,
			body:   `{"ok":false,"reason":"cross-origin","message":"Refused: Origin \"https://evil.example\" is not this dev server. /__dev-toolbar is a local debugging surface."}`,
			reason: "cross-origin", exit: 6,
			message: `Refused: Origin "https://evil.example" is not this dev server. /__dev-toolbar is a local debugging surface.`,
			details: map[string]string{"status": "403"},
		},
		{
			name: "403 run-not-allowed (relay refusal, with connection)", call: postRun, status: 403,
			body:   `{"ok":false,"reason":"run-not-allowed","message":"The connected page's bridge was built with allowRun: false, so it carries no runCommand. Pass ` + "`agentBridge({ allowRun: true })`" + ` to enable this route.","connection":` + connection + `}`,
			reason: "run-not-allowed", exit: 6,
			message: "The connected page's bridge was built with allowRun: false, so it carries no runCommand. Pass `agentBridge({ allowRun: true })` to enable this route.",
			details: map[string]string{"connection": connection, "status": "403"},
		},
		{
			name: "403 run-not-allowed (page outcome)", call: postRun, status: 403,
			body:   `{"ok":false,"reason":"run-not-allowed","command":"flags.set","ranIn":"tab-a","waitedMs":480}`,
			reason: "run-not-allowed", exit: 6,
			details: map[string]string{"command": `"flags.set"`, "ranIn": `"tab-a"`, "waitedMs": "480"},
		},
		{
			name: "404 unknown-route", call: getState, status: 404,
			body:   `{"ok":false,"reason":"unknown-route","message":"No such route: GET /__dev-toolbar/stat","routes":["GET /__dev-toolbar/state","GET /__dev-toolbar/commands","POST /__dev-toolbar/commands/:id","POST /__dev-toolbar/state (the page checks in here)"]}`,
			reason: "unknown-route", exit: 3,
			message: "No such route: GET /__dev-toolbar/stat",
			details: map[string]string{"routes": `["GET /__dev-toolbar/state","GET /__dev-toolbar/commands","POST /__dev-toolbar/commands/:id","POST /__dev-toolbar/state (the page checks in here)"]`, "status": "404"},
		},
		{
			name: "404 unknown-route, empty command id (no routes key)", call: postRun, status: 404,
			body:   `{"ok":false,"reason":"unknown-route","message":"No command id in the path."}`,
			reason: "unknown-route", exit: 3,
			message:    "No command id in the path.",
			notDetails: []string{"routes"},
		},
		{
			name: "404 unknown-command (page outcome, no message)", call: postRun, status: 404,
			body:   `{"ok":false,"reason":"unknown-command","command":"nope","ranIn":"tab-a","waitedMs":480}`,
			reason: "unknown-command", exit: 3,
			details: map[string]string{"command": `"nope"`, "ranIn": `"tab-a"`, "waitedMs": "480", "status": "404"},
		},
		{
			name: "409 torn-down", call: postRun, status: 409,
			body:   `{"ok":false,"reason":"torn-down","command":"flags.set","ranIn":"anonymous","waitedMs":12}`,
			reason: "torn-down", exit: 1,
			details: map[string]string{"command": `"flags.set"`, "ranIn": `"anonymous"`, "waitedMs": "12", "status": "409"},
		},
		{
			name: "422 threw", call: postRun, status: 422,
			body:   `{"ok":false,"reason":"threw","error":"\"new-header\" is a boolean flag; \"yes\" is not a valid boolean value.","errorName":"Error","command":"flags.set","ranIn":"8c1f6f0e","waitedMs":785}`,
			reason: "threw", exit: 1,
			message:    `"new-header" is a boolean flag; "yes" is not a valid boolean value.`,
			details:    map[string]string{"errorName": `"Error"`, "command": `"flags.set"`, "ranIn": `"8c1f6f0e"`, "waitedMs": "785", "status": "422"},
			notDetails: []string{"error"},
		},
		{
			name: "422 threw without errorName (non-Error throw)", call: postRun, status: 422,
			body:   `{"ok":false,"reason":"threw","error":"plain string thrown","command":"boom","ranIn":"tab-a","waitedMs":9}`,
			reason: "threw", exit: 1,
			message:    "plain string thrown",
			notDetails: []string{"errorName"},
		},
		{
			name: "500 middleware-error", call: postRun, status: 500,
			body:   `{"ok":false,"reason":"middleware-error","message":"The dev-toolbar middleware threw while handling this request: boom"}`,
			reason: "middleware-error", exit: 1,
			message: "The dev-toolbar middleware threw while handling this request: boom",
			details: map[string]string{"status": "500"},
		},
		{
			name: "502 no-outcome", call: postRun, status: 502,
			body:   `{"ok":false,"reason":"no-outcome","command":"flags.set","ranIn":"tab-a","waitedMs":501}`,
			reason: "no-outcome", exit: 1,
			details: map[string]string{"command": `"flags.set"`, "ranIn": `"tab-a"`, "waitedMs": "501", "status": "502"},
		},
		{
			name: "502 unrecognised outcome reason is passed through", call: postRun, status: 502,
			body:   `{"ok":false,"reason":"quota-exceeded","error":"too many","extra":{"n":3},"command":"flags.set","ranIn":"tab-a","waitedMs":40}`,
			reason: "quota-exceeded", exit: 1,
			message: "too many",
			details: map[string]string{"extra": `{"n":3}`, "command": `"flags.set"`, "status": "502"},
		},
		{
			name: "503 no-page-connected, never checked in", call: getState, status: 503,
			body:   `{"ok":false,"reason":"no-page-connected","message":"No page has reported to /__dev-toolbar yet. Open the app with the agent bridge's ` + "`report`" + ` option pointed at \"/__dev-toolbar/state\" — this middleware cannot call the page.","connection":{"instanceId":null,"allowRun":false,"connected":false,"checkedInAt":null,"reportedAt":null,"ageMs":null,"stale":true,"staleMs":3000,"reporterId":null,"reporters":0,"ambiguous":false}}`,
			reason: "no-page-connected", exit: 5,
			message: "No page has reported to /__dev-toolbar yet. Open the app with the agent bridge's `report` option pointed at \"/__dev-toolbar/state\" — this middleware cannot call the page.",
			details: map[string]string{"connection": `{"instanceId":null,"allowRun":false,"connected":false,"checkedInAt":null,"reportedAt":null,"ageMs":null,"stale":true,"staleMs":3000,"reporterId":null,"reporters":0,"ambiguous":false}`},
		},
		{
			name: "503 no-page-connected, stale (POST commands)", call: postRun, status: 503,
			body:   `{"ok":false,"reason":"no-page-connected","message":"The last check-in was 9620 ms ago, older than staleMs (3000). The tab is probably closed, reloading, or rebuilding.","connection":` + staleConnection + `}`,
			reason: "no-page-connected", exit: 5,
			message: "The last check-in was 9620 ms ago, older than staleMs (3000). The tab is probably closed, reloading, or rebuilding.",
			details: map[string]string{"connection": staleConnection, "status": "503"},
		},
		{
			name: "503 server-closing", call: postRun, status: 503,
			body:   `{"ok":false,"reason":"server-closing","message":"The dev server shut down before the page answered.","waitedMs":4200}`,
			reason: "server-closing", exit: 5,
			message: "The dev server shut down before the page answered.",
			details: map[string]string{"waitedMs": "4200", "status": "503"},
		},
		{
			name: "504 timeout, not picked up", call: postRun, status: 504,
			body:   `{"ok":false,"reason":"timeout","message":"No page picked up \"flags.set\" within 10000 ms. The bridge polls this route; is the tab open and the reporter running?","pickedUp":false,"waitedMs":10002,"command":"flags.set","connection":` + connection + `}`,
			reason: "timeout", exit: 4,
			message: `No page picked up "flags.set" within 10000 ms. The bridge polls this route; is the tab open and the reporter running?`,
			details: map[string]string{"pickedUp": "false", "waitedMs": "10002", "command": `"flags.set"`, "connection": connection, "status": "504"},
		},
		{
			name: "504 timeout, picked up", call: postRun, status: 504,
			body:   `{"ok":false,"reason":"timeout","message":"The page picked up \"flags.set\" but did not report a result within 10000 ms.","pickedUp":true,"waitedMs":10001,"command":"flags.set","connection":` + connection + `}`,
			reason: "timeout", exit: 4,
			message: `The page picked up "flags.set" but did not report a result within 10000 ms.`,
			details: map[string]string{"pickedUp": "true"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				relayJSON(w, tc.status, tc.body)
			}))
			defer srv.Close()
			c := mustClient(t, srv.URL, 5*time.Second)
			res, err := tc.call(context.Background(), c)
			if res != nil {
				t.Errorf("a refusal returned a result: %s", res)
			}
			e := wantError(t, err, tc.reason, tc.exit)
			if tc.message != "" && e.Message != tc.message {
				t.Errorf("message:\n got %q\nwant %q", e.Message, tc.message)
			}
			if e.Message == "" {
				t.Error("empty message")
			}
			for k, want := range tc.details {
				got, ok := e.Details[k]
				if !ok {
					t.Errorf("detail %q missing (details: %v)", k, keys(e.Details))
					continue
				}
				if g := compactJSON(t, got); g != compactJSON(t, want) {
					t.Errorf("detail %q = %s, want %s", k, g, want)
				}
			}
			for _, k := range tc.notDetails {
				if _, ok := e.Details[k]; ok {
					t.Errorf("detail %q should not be kept", k)
				}
			}
			// The error document printed for it keeps the reason and details.
			var out, errb bytes.Buffer
			code := output.New(output.Options{}, &out, &errb).Fail(err)
			if code != tc.exit || out.Len() != 0 {
				t.Errorf("Fail: exit %d stdout %q", code, out.String())
			}
			var doc map[string]any
			if err := json.Unmarshal(errb.Bytes(), &doc); err != nil {
				t.Fatalf("error document is not JSON: %v: %s", err, errb.String())
			}
			if doc["reason"] != tc.reason || doc["ok"] != false {
				t.Errorf("error document %s", errb.String())
			}
		})
	}
}

func TestSuccess(t *testing.T) {
	stateBody := `{"instanceId":"playground","contractVersion":2,"shell":{"mounted":true},"connection":` + connection + `,"extensions":{"flags":null}}`
	commandsBody := `{"instanceId":"playground","allowRun":true,"connection":` + connection + `,"commands":[{"id":"flags.set","label":"Set"}]}`
	runBody := `{"ok":true,"result":"was false","command":"flags.set","ranIn":"tab-a","waitedMs":785}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /__dev-toolbar/state":
			relayJSON(w, 200, stateBody)
		case "GET /__dev-toolbar/commands":
			relayJSON(w, 200, commandsBody)
		case "POST /__dev-toolbar/commands/flags.set":
			relayJSON(w, 200, runBody)
		default:
			relayJSON(w, 404, `{"ok":false,"reason":"unknown-route","message":"No such route"}`)
		}
	}))
	defer srv.Close()
	c := mustClient(t, srv.URL, 5*time.Second)
	for name, tc := range map[string]struct {
		call call
		want string
	}{
		"state":    {getState, stateBody},
		"commands": {getCommands, commandsBody},
		"run":      {postRun, runBody},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := tc.call(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			// The body is returned as sent: key order kept.
			if got := compactJSON(t, string(res)); got != compactJSON(t, tc.want) {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Answers that are not the relay's JSON (spec §8.1, §8.5).
func TestForeignAnswers(t *testing.T) {
	const viteBlocked = "Blocked request. This host (\"evil.example\") is not allowed.\nTo allow this host, add \"evil.example\" to `server.allowedHosts` in vite.config.js."
	tests := []struct {
		name    string
		call    call
		handler http.HandlerFunc
		reason  string
		exit    int
		mention string // substring of the message
	}{
		{
			name: "HTML index page with 200 (SPA fallback)", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(200)
				io.WriteString(w, "<!doctype html>\n<html><head><title>app</title></head><body><div id=root></div></body></html>\n")
			},
			reason: "not-a-relay", exit: 5, mention: "not installed",
		},
		{
			name: "empty 404 (GET with Accept: application/json)", call: getCommands,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) },
			reason:  "not-a-relay", exit: 5, mention: "404",
		},
		{
			name: "empty 404 on a POST", call: postRun,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) },
			reason:  "not-a-relay", exit: 5,
		},
		{
			name: "Vite's text/plain 403 Blocked request", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(403)
				io.WriteString(w, viteBlocked)
			},
			reason: "refused", exit: 6, mention: "Blocked request. This host",
		},
		{
			name: "Node's empty 400", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) },
			reason:  "bad-request", exit: 2, mention: "(empty body)",
		},
		{
			name: "JSON 200 without connection key (state)", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) { relayJSON(w, 200, `{"hello":"world"}`) },
			reason:  "not-a-relay", exit: 5, mention: `"connection"`,
		},
		{
			name: "JSON 200 without commands key (commands)", call: getCommands,
			handler: func(w http.ResponseWriter, r *http.Request) { relayJSON(w, 200, `{"connection":{}}`) },
			reason:  "not-a-relay", exit: 5, mention: `"commands"`,
		},
		{
			name: "JSON 200 without ok key (run)", call: postRun,
			handler: func(w http.ResponseWriter, r *http.Request) { relayJSON(w, 200, `{"result":1}`) },
			reason:  "not-a-relay", exit: 5, mention: `"ok"`,
		},
		{
			name: "JSON array 200", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) { relayJSON(w, 200, `[1,2]`) },
			reason:  "not-a-relay", exit: 5,
		},
		{
			name: "another server's JSON 404 (no reason)", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) { relayJSON(w, 404, `{"message":"Not Found"}`) },
			reason:  "not-a-relay", exit: 5,
		},
		{
			name: "text/plain 500", call: getState,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(500)
				io.WriteString(w, "Internal Server Error")
			},
			reason: "relay-error", exit: 1, mention: "Internal Server Error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := tc.call(context.Background(), mustClient(t, srv.URL, 5*time.Second))
			e := wantError(t, err, tc.reason, tc.exit)
			if !strings.Contains(e.Message, tc.mention) {
				t.Errorf("message %q does not mention %q", e.Message, tc.mention)
			}
		})
	}
}

func TestTransportFailures(t *testing.T) {
	t.Run("connection refused is relay-unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = mustClient(t, "http://"+addr, 5*time.Second).State(context.Background(), "")
		e := wantError(t, err, "relay-unreachable", 5)
		if !strings.Contains(e.Message, addr) {
			t.Errorf("message %q does not name the relay", e.Message)
		}
	})
	for name, c := range map[string]call{"GET": getState, "POST": postRun} {
		t.Run("server closing the connection mid-request ("+name+") is server-closing", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				conn.Close()
			}))
			defer srv.Close()
			_, err := c(context.Background(), mustClient(t, srv.URL, 5*time.Second))
			wantError(t, err, "server-closing", 5)
		})
	}
	t.Run("client timeout is timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		defer srv.Close()
		defer close(release)
		start := time.Now()
		_, err := mustClient(t, srv.URL, 150*time.Millisecond).Run(context.Background(), "slow", nil, "")
		e := wantError(t, err, "timeout", 4)
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("took %v to time out after 150ms", el)
		}
		if _, ok := e.Details["waitedMs"]; !ok {
			t.Error("timeout without waitedMs")
		}
	})
	t.Run("context deadline is timeout", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := mustClient(t, srv.URL, 5*time.Second).State(ctx, "")
		wantError(t, err, "timeout", 4)
	})
	t.Run("cancelled context is interrupted", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := mustClient(t, srv.URL, 5*time.Second).State(ctx, "")
		wantError(t, err, "interrupted", 130)
	})
}

// The request dtb sends: path escaping of ids, ?reporter=, body and headers.
func TestRequests(t *testing.T) {
	type seen struct {
		method, requestURI, path, reporter, ctype, accept, body string
		hasReporter                                             bool
	}
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{
			method: r.Method, requestURI: r.RequestURI, path: r.URL.Path,
			reporter: r.URL.Query().Get("reporter"), hasReporter: r.URL.Query().Has("reporter"),
			ctype: r.Header.Get("Content-Type"), accept: r.Header.Get("Accept"), body: string(b),
		}
		if r.Method == "POST" {
			relayJSON(w, 200, `{"ok":true}`)
		} else {
			relayJSON(w, 200, `{"connection":{},"commands":[]}`)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	tests := []struct {
		name string
		base string
		do   func(c *Client) error
		want seen
	}{
		{"state", srv.URL, func(c *Client) error { _, err := c.State(ctx, ""); return err },
			seen{method: "GET", requestURI: "/__dev-toolbar/state", path: "/__dev-toolbar/state", accept: "application/json"}},
		{"state of one reporter", srv.URL, func(c *Client) error { _, err := c.State(ctx, "tab a&b"); return err },
			seen{method: "GET", requestURI: "/__dev-toolbar/state?reporter=tab+a%26b", path: "/__dev-toolbar/state", reporter: "tab a&b", hasReporter: true, accept: "application/json"}},
		{"commands of one reporter", srv.URL, func(c *Client) error { _, err := c.Commands(ctx, "8c1f"); return err },
			seen{method: "GET", requestURI: "/__dev-toolbar/commands?reporter=8c1f", path: "/__dev-toolbar/commands", reporter: "8c1f", hasReporter: true, accept: "application/json"}},
		{"run with input", srv.URL, func(c *Client) error {
			_, err := c.Run(ctx, "flags.set", json.RawMessage(`{"key":"search.rank","value":9}`), "")
			return err
		}, seen{method: "POST", requestURI: "/__dev-toolbar/commands/flags.set", path: "/__dev-toolbar/commands/flags.set", ctype: "application/json", accept: "application/json", body: `{"key":"search.rank","value":9}`}},
		{"run without input sends no body", srv.URL, func(c *Client) error { _, err := c.Run(ctx, "overlays.disableAll", nil, ""); return err },
			seen{method: "POST", requestURI: "/__dev-toolbar/commands/overlays.disableAll", path: "/__dev-toolbar/commands/overlays.disableAll", accept: "application/json"}},
		{"run with a null input sends null", srv.URL, func(c *Client) error { _, err := c.Run(ctx, "x", json.RawMessage(`null`), ""); return err },
			seen{method: "POST", requestURI: "/__dev-toolbar/commands/x", path: "/__dev-toolbar/commands/x", ctype: "application/json", accept: "application/json", body: "null"}},
		{"id with / % space ? # is percent-encoded", srv.URL, func(c *Client) error { _, err := c.Run(ctx, "kit/demo 100%?#", nil, "r1"); return err },
			seen{method: "POST", requestURI: "/__dev-toolbar/commands/kit%2Fdemo%20100%25%3F%23?reporter=r1", path: "/__dev-toolbar/commands/kit/demo 100%?#", reporter: "r1", hasReporter: true, accept: "application/json"}},
		{"base with a path prefix and trailing slash", srv.URL + "/app/", func(c *Client) error { _, err := c.Run(ctx, "a/b", nil, ""); return err },
			seen{method: "POST", requestURI: "/app/__dev-toolbar/commands/a%2Fb", path: "/app/__dev-toolbar/commands/a/b", accept: "application/json"}},
		{"base without a scheme", strings.TrimPrefix(srv.URL, "http://"), func(c *Client) error { _, err := c.State(ctx, ""); return err },
			seen{method: "GET", requestURI: "/__dev-toolbar/state", path: "/__dev-toolbar/state", accept: "application/json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got = seen{}
			if err := tc.do(mustClient(t, tc.base, 5*time.Second)); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("request:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"ftp://localhost:5173", "http://", "http://[::1"} {
		_, err := New(bad, time.Second)
		wantError(t, err, "usage", 2)
	}
	c, err := New("", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Base() != DefaultBase {
		t.Errorf("default base %q, want %q", c.Base(), DefaultBase)
	}
	if c.http.Timeout != DefaultTimeout {
		t.Errorf("default timeout %v", c.http.Timeout)
	}
	c, _ = New("localhost:5273/", time.Second)
	if c.Base() != "http://localhost:5273" {
		t.Errorf("base %q", c.Base())
	}
}

func TestRouteSuffix(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:5273/__dev-toolbar":               "http://localhost:5273",
		"http://localhost:5273/__dev-toolbar/":              "http://localhost:5273",
		"http://localhost:5273/__dev-toolbar/state":         "http://localhost:5273",
		"http://localhost:5273/__dev-toolbar/commands":      "http://localhost:5273",
		"http://localhost:5273/__dev-toolbar/state?x=1#top": "http://localhost:5273",
		"localhost:3000/app/__dev-toolbar":                  "http://localhost:3000/app",
		"http://localhost:3000/__dev-toolbarX":              "http://localhost:3000/__dev-toolbarX",
		"http://localhost:3000/app":                         "http://localhost:3000/app",
	} {
		c := mustClient(t, in, time.Second)
		if c.Base() != want {
			t.Errorf("%s: base %q, want %q", in, c.Base(), want)
		}
	}
	c := mustClient(t, "http://localhost:5273/__dev-toolbar", time.Second)
	if got := c.url("/state", ""); got != "http://localhost:5273/__dev-toolbar/state" {
		t.Errorf("state URL %s", got)
	}
}

func TestBusyRefusals(t *testing.T) {
	busy := json.RawMessage(`{"connected":false,"stale":true,"busy":{"commandId":"demo.sleep","ageMs":4200}}`)
	e := relayError(503, map[string]json.RawMessage{"ok": json.RawMessage("false"), "reason": json.RawMessage(`"no-page-connected"`), "message": json.RawMessage(`"The last check-in was 4200 ms ago"`), "connection": busy}, "")
	if e.Reason != "page-busy" || e.ExitCode() != 4 || !strings.Contains(e.Message, `"demo.sleep"`) || !strings.Contains(e.Message, "4200 ms") {
		t.Errorf("503 while busy: %s %q", e.Reason, e.Message)
	}
	if b, ok := e.Details["busy"].(*Busy); !ok || b.CommandID != "demo.sleep" || b.AgeMs != 4200 {
		t.Errorf("busy detail %#v", e.Details["busy"])
	}
	// The relay's message ends in a full stop (issue 22.8: it read "….; the page is busy").
	e = relayError(504, map[string]json.RawMessage{"reason": json.RawMessage(`"timeout"`), "message": json.RawMessage(`"No page picked up \"x\" within 10000 ms."`), "connection": busy}, "")
	if e.Reason != "timeout" || !strings.Contains(e.Message, "busy running") || strings.Contains(e.Message, ".;") {
		t.Errorf("504 while busy: %s %q", e.Reason, e.Message)
	}
	for _, notBusy := range []string{`{"busy":null}`, `{"busy":false}`, `{}`} {
		e = relayError(503, map[string]json.RawMessage{"reason": json.RawMessage(`"no-page-connected"`), "connection": json.RawMessage(notBusy)}, "")
		if e.Reason != "no-page-connected" {
			t.Errorf("%s: %s", notBusy, e.Reason)
		}
	}
	// A request for a reporter that never checked in: the relay describes its
	// latest page, whose being busy says nothing of the one asked for.
	other := json.RawMessage(`{"connected":true,"reporterId":"p-1","busy":{"commandId":"env.info","ageMs":7}}`)
	e = relayError(503, map[string]json.RawMessage{"reason": json.RawMessage(`"no-page-connected"`), "connection": other}, "evil")
	if e.Reason != "no-page-connected" || e.Details["busy"] != nil {
		t.Errorf("503 for an unknown reporter while another page is busy: %s %q", e.Reason, e.Message)
	}
	if e = relayError(503, map[string]json.RawMessage{"reason": json.RawMessage(`"no-page-connected"`), "connection": other}, "p-1"); e.Reason != "page-busy" {
		t.Errorf("503 for the busy reporter: %s", e.Reason)
	}
	if b := BusyOf(json.RawMessage(`true`)); b == nil || b.CommandID != "" {
		t.Errorf("busy: true = %#v", b)
	}
}

func mustClient(t *testing.T, base string, timeout time.Duration) *Client {
	t.Helper()
	c, err := New(base, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantError(t *testing.T, err error, reason string, exit int) *output.Error {
	t.Helper()
	var e *output.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *output.Error reason %s", err, err, reason)
	}
	if e.Reason != reason || e.ExitCode() != exit {
		t.Fatalf("reason %q exit %d (%s), want %q exit %d", e.Reason, e.ExitCode(), e.Message, reason, exit)
	}
	return e
}

func compactJSON(t *testing.T, v any) string {
	t.Helper()
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	case json.RawMessage:
		b = x
	default:
		var err error
		if b, err = json.Marshal(x); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return buf.String()
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Issue 19.4: the timeout is the whole command's, split across its requests: a
// slow first answer leaves the second only what is left.
func TestTimeoutIsTheWholeCommands(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			time.Sleep(1200 * time.Millisecond)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"instanceId":"p","allowRun":true,"connection":{},"commands":[]}`))
			return
		}
		<-r.Context().Done() // a command that never answers
	}))
	defer srv.Close()
	c := mustClient(t, srv.URL, 2*time.Second)
	start := time.Now()
	if _, err := c.Commands(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	_, err := c.Run(context.Background(), "demo.sleep", nil, "")
	took := time.Since(start)
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "timeout" {
		t.Fatalf("%v", err)
	}
	// Per request, the run alone would have had 2 s: 3.2 s in all.
	if took > 2800*time.Millisecond {
		t.Errorf("gave up after %v with --timeout 2s", took)
	}
}

// Issue 22.7: an input over the protocol's 4 MiB is refused before it is sent (the
// upstream relay destroys the connection, which read as server-closing).
func TestOversizedInputIsNotSent(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		r.Body.Close()
	}))
	defer srv.Close()
	c := mustClient(t, srv.URL, 5*time.Second)
	in := json.RawMessage(`"` + strings.Repeat("x", MaxInput) + `"`)
	_, err := c.Run(context.Background(), "demo.echo", in, "")
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "bad-input" || e.ExitCode() != 2 {
		t.Fatalf("%v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests sent", hits.Load())
	}
}
