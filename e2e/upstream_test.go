package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstreamRelay is a loopback stand-in for the upstream playground relay
// (examples/playground/plugins/devToolbarAgent.ts, spec §4) in front of the
// fixture app: ONE slot (the last snapshot of any page), ?reporter= ignored, and
// every queued command handed to whichever page checks in next. dtb relay targets
// pages by reporter; this is the relay dtb must not trust to do so. It serves
// testdata/toolbar for every other path, so the fixture's check-ins are
// same-origin.
//
// With busy set it also says what dtb relay says about a page that is running a
// command (connection.busy, the format in internal/relayclient/busy.go), so the
// client's handling of it is tested against a real page doing real work.
type upstreamRelay struct {
	URL     string
	staleMs int64
	timeout time.Duration
	busy    bool

	srv *httptest.Server
	mu  sync.Mutex

	snapshot   json.RawMessage // compact, as the page sent it
	snapshotAt time.Time
	checkInAt  time.Time
	instanceID *string
	allowRun   bool
	reporterID *string
	reporters  map[string]time.Time
	seq        int
	queue      []*waiting // insertion order
	closing    bool
}

type waiting struct {
	token, id string
	input     json.RawMessage // nil: no input
	postedAt  time.Time
	pickedAt  time.Time // zero: not picked up
	answer    chan upstreamAnswer
}

type upstreamAnswer struct {
	status int
	body   any
}

const upstreamBase = "/__dev-toolbar"

// startUpstream starts the stand-in on 127.0.0.1:0 and stops it when the test
// ends, answering every waiting command first (503 server-closing).
func startUpstream(t *testing.T, staleMs int64, busy bool) *upstreamRelay {
	t.Helper()
	r := &upstreamRelay{staleMs: staleMs, timeout: 10 * time.Second, busy: busy, reporters: map[string]time.Time{}}
	static := http.FileServer(http.Dir(filepath.Join(root, "testdata", "toolbar")))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != upstreamBase && !strings.HasPrefix(req.URL.Path, upstreamBase+"/") {
			static.ServeHTTP(w, req)
			return
		}
		r.serve(w, req)
	}))
	r.URL = r.srv.URL
	t.Cleanup(r.close)
	return r
}

func (r *upstreamRelay) close() {
	r.mu.Lock()
	r.closing = true
	for _, c := range r.queue {
		c.answer <- upstreamAnswer{503, obj("ok", false, "reason", "server-closing", "message", "The dev server shut down before the page answered.", "waitedMs", time.Since(c.postedAt).Milliseconds())}
	}
	r.queue = nil
	r.mu.Unlock()
	r.srv.Close()
}

// waitingCount is how many commands wait for an answer, picked up or not.
func (r *upstreamRelay) waitingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue)
}

// pickedUpCount is how many waiting commands a page has taken.
func (r *upstreamRelay) pickedUpCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.queue {
		if !q.pickedAt.IsZero() {
			n++
		}
	}
	return n
}

// ordered is a JSON object that keeps its key order.
type ordered [][2]any

func obj(kv ...any) ordered {
	var o ordered
	for i := 0; i+1 < len(kv); i += 2 {
		o = append(o, [2]any{kv[i], kv[i+1]})
	}
	return o
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[0])
		v, err := json.Marshal(kv[1])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// send writes the relay's framing: pretty JSON with two spaces and a newline.
func send(w http.ResponseWriter, status int, body any) {
	raw, err := json.Marshal(body)
	if err != nil {
		status, raw = 500, []byte(`{"ok":false,"reason":"middleware-error"}`)
	}
	var b bytes.Buffer
	json.Indent(&b, raw, "", "  ")
	b.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func (r *upstreamRelay) serve(w http.ResponseWriter, req *http.Request) {
	host := strings.ToLower(strings.TrimSpace(req.Host))
	if strings.HasPrefix(host, "[") {
		host = host[:strings.IndexByte(host, ']')+1]
	} else if i := strings.IndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	switch host {
	case "localhost", "127.0.0.1", "::1", "[::1]":
	default:
		send(w, 403, obj("ok", false, "reason", "non-loopback-host", "message", fmt.Sprintf("Refused: Host %q is not a loopback name.", req.Host)))
		return
	}
	if o := req.Header.Get("Origin"); o != "" && o != "http://"+req.Host && o != "https://"+req.Host {
		send(w, 403, obj("ok", false, "reason", "cross-origin", "message", fmt.Sprintf("Refused: Origin %q is not this dev server.", o)))
		return
	}
	// The query string (?reporter=) is dropped: one slot for every page.
	path := req.URL.Path
	switch {
	case req.Method == "GET" && path == upstreamBase+"/state":
		r.get(w, true)
	case req.Method == "GET" && path == upstreamBase+"/commands":
		r.get(w, false)
	case req.Method == "POST" && path == upstreamBase+"/state":
		r.checkIn(w, req)
	case req.Method == "POST" && strings.HasPrefix(path, upstreamBase+"/commands/") && len(path) > len(upstreamBase+"/commands/"):
		r.command(w, req, strings.TrimPrefix(req.URL.EscapedPath(), upstreamBase+"/commands/"))
	default:
		send(w, 404, obj("ok", false, "reason", "unknown-route", "message", "No such route: "+req.Method+" "+path))
	}
}

// connection is spec §4.5, under r.mu.
func (r *upstreamRelay) connection(now time.Time) ordered {
	for id, at := range r.reporters {
		if now.Sub(at).Milliseconds() > r.staleMs {
			delete(r.reporters, id)
		}
	}
	connected := !r.checkInAt.IsZero() && now.Sub(r.checkInAt).Milliseconds() <= r.staleMs
	iso := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	var age any
	if !r.snapshotAt.IsZero() {
		age = now.Sub(r.snapshotAt).Milliseconds()
	}
	c := obj("instanceId", r.instanceID, "allowRun", r.allowRun, "connected", connected,
		"checkedInAt", iso(r.checkInAt), "reportedAt", iso(r.snapshotAt), "ageMs", age,
		"stale", !connected, "staleMs", r.staleMs, "reporterId", r.reporterID,
		"reporters", len(r.reporters), "ambiguous", len(r.reporters) > 1)
	if r.busy {
		for _, q := range r.queue {
			if !q.pickedAt.IsZero() {
				c = append(c, [2]any{"busy", obj("commandId", q.id, "ageMs", now.Sub(q.pickedAt).Milliseconds())})
				break
			}
		}
	}
	return c
}

func (r *upstreamRelay) noPage(now time.Time) ordered {
	msg := "No page has reported to /__dev-toolbar yet."
	if !r.checkInAt.IsZero() {
		msg = fmt.Sprintf("The last check-in was %d ms ago, older than staleMs (%d). The tab is probably closed, reloading, or rebuilding.", now.Sub(r.checkInAt).Milliseconds(), r.staleMs)
	}
	return obj("ok", false, "reason", "no-page-connected", "message", msg, "connection", r.connection(now))
}

func (r *upstreamRelay) get(w http.ResponseWriter, state bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.snapshot == nil {
		send(w, 503, r.noPage(now))
		return
	}
	conn := r.connection(now)
	var snap struct {
		InstanceID  any               `json:"instanceId"`
		Commands    json.RawMessage   `json:"commands"`
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	json.Unmarshal(r.snapshot, &snap)
	if !state {
		cmds := snap.Commands
		if cmds == nil {
			cmds = json.RawMessage("[]")
		}
		send(w, 200, obj("instanceId", snap.InstanceID, "allowRun", r.allowRun, "connection", conn, "commands", cmds))
		return
	}
	var ext ordered
	for _, d := range snap.Diagnostics {
		var e struct {
			ID     any             `json:"id"`
			Status any             `json:"status"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(d, &e) != nil {
			continue
		}
		id, ok := e.ID.(string)
		if !ok {
			continue
		}
		var v any = nil
		if e.Status == "ok" && e.Data != nil {
			v = e.Data
		}
		ext = append(ext, [2]any{id, v})
	}
	// The snapshot's own keys first, then connection and extensions.
	c, _ := json.Marshal(conn)
	x, _ := json.Marshal(ext)
	if ext == nil {
		x = []byte("{}")
	}
	body := append([]byte(nil), bytes.TrimSuffix(bytes.TrimSpace(r.snapshot), []byte("}"))...)
	if len(bytes.TrimSpace(body)) > 1 {
		body = append(body, ',')
	}
	body = append(append(append(append(append(body, `"connection":`...), c...), `,"extensions":`...), x...), '}')
	send(w, 200, json.RawMessage(body))
}

func (r *upstreamRelay) checkIn(w http.ResponseWriter, req *http.Request) {
	data, err := io.ReadAll(io.LimitReader(req.Body, 4<<20+1))
	if err != nil || len(data) > 4<<20 {
		send(w, 400, obj("ok", false, "reason", "bad-body", "message", "body exceeds 4194304 bytes"))
		return
	}
	if len(data) == 0 {
		data = []byte("{}")
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil || body == nil {
		send(w, 400, obj("ok", false, "reason", "bad-body", "message", "A check-in body must be a JSON object."))
		return
	}
	var results []json.RawMessage
	if raw, ok := body["results"]; ok && json.Unmarshal(raw, &results) != nil {
		send(w, 400, obj("ok", false, "reason", "bad-body", "message", "`results` must be an array of { token, outcome } objects."))
		return
	}
	if raw, ok := body["protocolVersion"]; ok && string(raw) != "2" {
		send(w, 400, obj("ok", false, "reason", "protocol-mismatch", "message", "devToolbarAgent.ts speaks protocol 2", "expected", 2, "received", raw))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.checkInAt = now
	var inst string
	if json.Unmarshal(body["instanceId"], &inst) == nil {
		r.instanceID = &inst
	}
	r.allowRun = string(body["allowRun"]) == "true"
	rid := "anonymous"
	var idp *string
	var s string
	if json.Unmarshal(body["reporterId"], &s) == nil {
		rid, idp = s, &s
	}
	r.reporters[rid] = now
	if raw, ok := body["snapshot"]; ok && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		var c bytes.Buffer
		json.Compact(&c, raw)
		r.snapshot, r.snapshotAt, r.reporterID = c.Bytes(), now, idp
	}
	for _, res := range results {
		var e struct {
			Token   *string         `json:"token"`
			Outcome json.RawMessage `json:"outcome"`
		}
		if json.Unmarshal(res, &e) != nil || e.Token == nil {
			continue
		}
		for i, q := range r.queue {
			if q.token != *e.Token {
				continue
			}
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			waited := now.Sub(q.postedAt).Milliseconds()
			var outcome map[string]json.RawMessage
			if json.Unmarshal(e.Outcome, &outcome) != nil || outcome == nil {
				q.answer <- upstreamAnswer{502, obj("ok", false, "reason", "no-outcome", "command", q.id, "ranIn", rid, "waitedMs", waited)}
				break
			}
			// {...outcome, command, ranIn, waitedMs}, the outcome's order kept.
			ans := append([]byte(nil), bytes.TrimSuffix(bytes.TrimSpace(e.Outcome), []byte("}"))...)
			if len(outcome) > 0 {
				ans = append(ans, ',')
			}
			tail, _ := json.Marshal(obj("command", q.id, "ranIn", rid, "waitedMs", waited))
			ans = append(ans, tail[1:]...)
			q.answer <- upstreamAnswer{statusFor(outcome), json.RawMessage(ans)}
			break
		}
	}
	var pending []ordered
	for _, q := range r.queue {
		if !q.pickedAt.IsZero() {
			continue
		}
		q.pickedAt = now
		p := obj("token", q.token, "id", q.id)
		if q.input != nil {
			p = append(p, [2]any{"input", q.input})
		}
		pending = append(pending, p)
	}
	if pending == nil {
		pending = []ordered{}
	}
	send(w, 200, obj("ok", true, "pending", pending))
}

func statusFor(outcome map[string]json.RawMessage) int {
	if string(outcome["ok"]) == "true" {
		return 200
	}
	var reason string
	json.Unmarshal(outcome["reason"], &reason)
	switch reason {
	case "unknown-command":
		return 404
	case "run-not-allowed":
		return 403
	case "torn-down":
		return 409
	case "threw":
		return 422
	}
	return 502
}

func (r *upstreamRelay) command(w http.ResponseWriter, req *http.Request, rawID string) {
	id, err := url.PathUnescape(rawID)
	if err != nil {
		send(w, 400, obj("ok", false, "reason", "bad-command-id", "message", "The command id in the path is not valid percent-encoding: "+rawID))
		return
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
	if err != nil {
		send(w, 400, obj("ok", false, "reason", "bad-body", "message", err.Error()))
		return
	}
	var input json.RawMessage
	if t := bytes.TrimSpace(data); len(t) > 0 {
		if !json.Valid(t) {
			send(w, 400, obj("ok", false, "reason", "bad-body", "message", "The request body must be JSON (the command's input) or empty."))
			return
		}
		input = t
	}
	r.mu.Lock()
	now := time.Now()
	if r.closing || r.checkInAt.IsZero() || now.Sub(r.checkInAt).Milliseconds() > r.staleMs {
		body := r.noPage(now)
		r.mu.Unlock()
		send(w, 503, body)
		return
	}
	if !r.allowRun {
		body := obj("ok", false, "reason", "run-not-allowed", "message", "The connected page's bridge was built with allowRun: false, so it carries no runCommand.", "connection", r.connection(now))
		r.mu.Unlock()
		send(w, 403, body)
		return
	}
	r.seq++
	c := &waiting{token: fmt.Sprintf("c%d-%d", r.seq, now.UnixMilli()), id: id, input: input, postedAt: now, answer: make(chan upstreamAnswer, 1)}
	r.queue = append(r.queue, c)
	r.mu.Unlock()
	select {
	case a := <-c.answer:
		send(w, a.status, a.body)
	case <-time.After(r.timeout):
		r.mu.Lock()
		for i, q := range r.queue {
			if q == c {
				r.queue = append(r.queue[:i], r.queue[i+1:]...)
				break
			}
		}
		picked := !c.pickedAt.IsZero()
		body := obj("ok", false, "reason", "timeout", "message", fmt.Sprintf("No page picked up %q within %d ms.", id, r.timeout.Milliseconds()),
			"pickedUp", picked, "waitedMs", time.Since(c.postedAt).Milliseconds(), "command", id, "connection", r.connection(time.Now()))
		r.mu.Unlock()
		select {
		case a := <-c.answer: // settled meanwhile
			send(w, a.status, a.body)
		default:
			send(w, 504, body)
		}
	}
}
