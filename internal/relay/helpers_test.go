package relay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// relayT is a relay under test behind a real httptest listener on 127.0.0.1.
type relayT struct {
	t   *testing.T
	s   *Server
	url string
}

func newRelay(t *testing.T, opts Options) *relayT {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// The relay's own listener wrapper, as Serve uses it.
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.Listener = rawTargetListener{Listener: ts.Listener, secret: s.secret}
	ts.Start()
	t.Cleanup(func() {
		s.closeAll(0) // releases held and waiting requests so Close does not block
		ts.Close()
	})
	return &relayT{t: t, s: s, url: ts.URL}
}

// One connection per request, like curl and dtb (and the raw-target repair, which
// only looks at the first request line of a connection).
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

type resp struct {
	status int
	header http.Header
	raw    string
	val    any    // parsed body (nil when not JSON)
	obj    object // parsed body when it is an object
	took   time.Duration
}

func (o object) keys() []string {
	ks := make([]string, len(o))
	for i, m := range o {
		ks[i] = m.key
	}
	return ks
}

// str / num / boolean read a top-level member for assertions.
func (r resp) str(key string) string {
	v, _ := r.obj.get(key)
	s, _ := v.(string)
	return s
}

func (r resp) has(key string) bool {
	_, ok := r.obj.get(key)
	return ok
}

func (r resp) field(path ...string) any {
	var v any = r.obj
	for _, k := range path {
		o, ok := v.(object)
		if !ok {
			return nil
		}
		v, _ = o.get(k)
	}
	return v
}

// do sends one request. headers may carry "Host".
func (rt *relayT) do(method, path, body string, headers ...string) resp {
	rt.t.Helper()
	return rt.doCtx(context.Background(), method, path, body, headers...)
}

func (rt *relayT) doCtx(ctx context.Context, method, path, body string, headers ...string) resp {
	rt.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rt.url+"/", rd)
	if err != nil {
		rt.t.Fatal(err)
	}
	req.URL.Opaque = path // sent as is, malformed escapes included
	for i := 0; i+1 < len(headers); i += 2 {
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
		} else {
			req.Header.Add(headers[i], headers[i+1])
		}
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return resp{status: -1, raw: err.Error(), took: time.Since(start)}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, header: res.Header, raw: string(b), took: time.Since(start)}
	if v, err := parseJSON(b); err == nil {
		r.val = v
		r.obj, _ = v.(object)
	}
	return r
}

// async sends a request in the background (for the routes that wait).
func (rt *relayT) async(method, path, body string, headers ...string) chan resp {
	ch := make(chan resp, 1)
	go func() { ch <- rt.do(method, path, body, headers...) }()
	return ch
}

func (rt *relayT) checkIn(body string) resp {
	rt.t.Helper()
	return rt.do("POST", "/__dev-toolbar/state", body, "Content-Type", "application/json")
}

// waitQueued waits until n commands are waiting in the relay.
func (rt *relayT) waitQueued(n int) {
	rt.t.Helper()
	rt.waitCount("queued commands", n, func(st *state) int { return len(st.queue) })
}

// waitHeld waits until n check-ins are being held.
func (rt *relayT) waitHeld(n int) {
	rt.t.Helper()
	rt.waitCount("held check-ins", n, func(st *state) int { return len(st.holds) })
}

func (rt *relayT) waitCount(what string, n int, count func(*state) int) {
	rt.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rt.s.mu.Lock()
		got := count(&rt.s.state)
		rt.s.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			rt.t.Fatalf("waiting for %d %s, have %d", n, what, got)
		}
		time.Sleep(time.Millisecond)
	}
}

func recv(t *testing.T, ch chan resp, within time.Duration) resp {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("no answer within %v", within)
		return resp{}
	}
}

func notYet(t *testing.T, ch chan resp, wait time.Duration) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("answered early: %d %s", r.status, r.raw)
	case <-time.After(wait):
	}
}

// body builds a check-in in the reporter's key order (spec §3.2). snapshot and
// results are raw JSON; snapshot "" leaves the key out.
func body(reporter string, allowRun bool, snapshot string, results ...string) string {
	var b strings.Builder
	b.WriteString(`{"protocolVersion":2,"instanceId":"playground"`)
	if reporter != "" {
		fmt.Fprintf(&b, `,"reporterId":%q`, reporter)
	}
	fmt.Fprintf(&b, `,"allowRun":%t`, allowRun)
	if snapshot != "" {
		b.WriteString(`,"snapshot":` + snapshot)
	}
	b.WriteString(`,"results":[` + strings.Join(results, ",") + `]}`)
	return b.String()
}

func result(token, outcome string) string {
	return fmt.Sprintf(`{"token":%q,"outcome":%s}`, token, outcome)
}

const miniSnapshot = `{"instanceId":"playground","contractVersion":2,"visible":true,"allowRun":true,"commands":[{"id":"flags.set","label":"Set"}],"shell":{"mounted":true},"diagnostics":[]}`

func snapshotOf(reporter string) string {
	return `{"instanceId":"playground","contractVersion":2,"visible":true,"allowRun":true,"commands":[],"shell":{"mounted":true},"diagnostics":[{"id":"who","label":"Who","status":"ok","data":` + fmt.Sprintf("%q", reporter) + `}]}`
}

// pending returns the [{token,id,input?}] of a check-in answer.
func pending(t *testing.T, r resp) []object {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("check-in: %d %s", r.status, r.raw)
	}
	arr, ok := r.field("pending").([]any)
	if !ok {
		t.Fatalf("no pending array: %s", r.raw)
	}
	out := make([]object, len(arr))
	for i, e := range arr {
		out[i] = e.(object)
	}
	return out
}

func tokenOf(o object) string {
	v, _ := o.get("token")
	return v.(string)
}

func expectReason(t *testing.T, r resp, status int, reason string) {
	t.Helper()
	if r.status != status || r.str("reason") != reason {
		t.Fatalf("want %d %s, got %d %s", status, reason, r.status, r.raw)
	}
}

func expectKeys(t *testing.T, o object, want ...string) {
	t.Helper()
	if got := o.keys(); !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

// jsonEq compares a parsed value with JSON text, ignoring formatting.
func jsonEq(t *testing.T, got any, want string) {
	t.Helper()
	w, err := parseJSON([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := string(render(got)), string(render(w)); g != w {
		t.Fatalf("got %s, want %s", g, w)
	}
}

// pub is the public name callers see for the page with reporterId id.
func (rt *relayT) pub(id string) string { return rt.s.publicID(id) }

// pubs is the JSON array of the public names of ids.
func (rt *relayT) pubs(ids ...string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(rt.pub(id))
	}
	return "[" + strings.Join(q, ",") + "]"
}
