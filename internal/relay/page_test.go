package relay

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/cdp"
)

// The tests in this file drive the fixture app (testdata/toolbar: the upstream
// reporter's behaviour) in the test binary's shared headless Chromium, served by a
// relay that really listens (Serve, with its own listener and limits).

func TestMain(m *testing.M) { os.Exit(browsertest.Releasing(m).Run()) }

var fixtureDir = filepath.Join("..", "..", "testdata", "toolbar")

// servedRelay is a relay running Serve on a real loopback listener.
type servedRelay struct {
	*relayT
	stop func() // cancels Serve and waits for it to return
}

// serveRelay starts Serve with opts (Listen defaults to 127.0.0.1:0, Static to the
// fixture app) and stops it when the test ends.
func serveRelay(t *testing.T, opts Options) *servedRelay {
	t.Helper()
	opts.Listen = cmp.Or(opts.Listen, "127.0.0.1:0")
	if opts.Upstream == "" {
		opts.Static = cmp.Or(opts.Static, fixtureDir)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("Serve did not return")
		}
	}
	t.Cleanup(stop)
	return &servedRelay{relayT: &relayT{t: t, s: s, url: "http://" + addr.String()}, stop: stop}
}

// tab is one page of the fixture app in the shared browser.
type tab struct {
	t        *testing.T
	id       string
	conn     *cdp.Conn
	closed   bool
	browser  *browsertest.Browser
	reporter string
}

// openFixture opens the fixture app from rt with the query knobs (reporterId is
// set to a fresh one unless given) and waits until its first check-in is in.
func openFixture(t *testing.T, rt *relayT, knobs string) *tab {
	t.Helper()
	bins := browsertest.Find()
	b := browsertest.Shared(t, cmp.Or(bins.Chrome, bins.Preferred()))
	q, _ := url.ParseQuery(knobs)
	// reporterId=auto: the page's own random id, as a real page has (not in its URL).
	auto := q.Get("reporterId") == "auto"
	if auto {
		q.Del("reporterId")
	} else if q.Get("reporterId") == "" {
		q.Set("reporterId", "page-"+strings.ReplaceAll(t.Name(), "/", "-")+"-"+time.Now().Format("150405.000000"))
	}
	info := devtools(t, "PUT", b.Endpoint+"/json/new?"+rt.url+"/index.html?"+q.Encode())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := cdp.Dial(ctx, info["webSocketDebuggerUrl"].(string), nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := &tab{t: t, id: info["id"].(string), conn: conn, browser: b, reporter: q.Get("reporterId")}
	t.Cleanup(tb.close)
	deadline := time.Now().Add(15 * time.Second)
	for auto && tb.reporter == "" {
		_ = json.Unmarshal([]byte(tb.eval(`window.__fixture ? __fixture.stats().reporterId : ""`)), &tb.reporter)
		if time.Now().After(deadline) {
			t.Fatal("the fixture page never started its reporter")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for !tb.checkedIn(rt) {
		if time.Now().After(deadline) {
			t.Fatalf("the fixture page never checked in: %s", tb.eval(`JSON.stringify(window.__fixture && __fixture.stats())`))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return tb
}

func (tb *tab) checkedIn(rt *relayT) bool {
	rt.s.mu.Lock()
	defer rt.s.mu.Unlock()
	sl := rt.s.state.slots[tb.reporter]
	return sl != nil && sl.snap != nil
}

// eval evaluates expr in the page (promises awaited) and returns the JSON of its value.
func (tb *tab) eval(expr string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	err := tb.conn.Call(ctx, "", "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}, &res)
	if err != nil {
		tb.t.Fatalf("eval %s: %v", expr, err)
	}
	if res.ExceptionDetails != nil {
		tb.t.Fatalf("eval %s threw: %s", expr, res.ExceptionDetails)
	}
	return string(res.Result.Value)
}

// stats is the page's own record of its reporter (__fixture.stats()).
func (tb *tab) stats() map[string]any {
	tb.t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(tb.eval(`__fixture.stats()`)), &v); err != nil {
		tb.t.Fatal(err)
	}
	return v
}

// close closes the tab (idempotent).
func (tb *tab) close() {
	if tb.closed {
		return
	}
	tb.closed = true
	tb.conn.Close()
	devtools(tb.t, "GET", tb.browser.Endpoint+"/json/close/"+tb.id)
}

// Issue 10.10: bound to another loopback address, the relay accepts that address
// as a Host (the page opened at http://127.0.0.2:PORT checks in), and still refuses
// the other 127/8 addresses.
func TestListenOnAnotherLoopbackAddress(t *testing.T) {
	rt := serveRelay(t, Options{Listen: "127.0.0.2:0"})
	host := strings.TrimPrefix(rt.url, "http://")
	if !strings.HasPrefix(host, "127.0.0.2:") {
		t.Fatalf("listening on %s", host)
	}
	tb := openFixture(t, rt.relayT, "")
	// The relay holds the snapshot before its answer reaches the page: give the
	// page's own count a moment.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := tb.stats()
		if st["lastStatus"] == 200.0 && st["ok"].(float64) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's check-ins: %v", st)
		}
	}
	r := rt.do("GET", "/__dev-toolbar/state?reporter="+tb.reporter, "", "Host", host, "Origin", "http://"+host)
	if r.status != 200 || r.field("connection", "connected") != true {
		t.Fatalf("%d %.300s", r.status, r.raw)
	}
	expectReason(t, rt.do("GET", "/__dev-toolbar/state", "", "Host", "127.0.0.3:"+strings.Split(host, ":")[1]), 403, "non-loopback-host")
}

// Issue 10.4: a result too big for a check-in. The page's follow-up carrying it
// is over the 4 MiB cap; the relay reads it anyway, answers the waiting caller
// result-too-large with the size at once, and answers the page 200, so the page
// neither re-sends it nor loses its slot, and the next command runs.
func TestOversizedResultKeepsThePage(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs})
	tb := openFixture(t, rt.relayT, "")
	q := "?reporter=" + tb.reporter
	// An input of exactly 4 MiB: the outcome wrapping it is over the cap by itself.
	big := strings.Repeat("x", maxBody-len(`{"s":""}`))
	r := rt.do("POST", "/__dev-toolbar/commands/demo.echo"+q, `{"s":"`+big+`"}`)
	expectReason(t, r, 413, "result-too-large")
	if n, _ := strconv.Atoi(fmt.Sprint(r.field("bytes"))); n < len(big) || fmt.Sprint(r.field("maxBytes")) != fmt.Sprint(maxBody) {
		t.Errorf("size: %.300s", r.raw)
	}
	if r.str("command") != "demo.echo" || r.str("ranIn") != tb.reporter {
		t.Errorf("answer: %.300s", r.raw)
	}
	r = rt.do("POST", "/__dev-toolbar/commands/flags.set"+q, `{"key":"search.rank","value":9}`)
	if r.status != 200 {
		t.Fatalf("the next command: %d %.300s", r.status, r.raw)
	}
	st := tb.stats()
	if st["failed"] != 0.0 || st["lastStatus"] != 200.0 || st["commandsRun"] != 2.0 || st["outbox"] != 0.0 {
		t.Errorf("the page's record: failed %v, lastStatus %v, commandsRun %v, outbox %v", st["failed"], st["lastStatus"], st["commandsRun"], st["outbox"])
	}
	if r := rt.do("GET", "/__dev-toolbar/state"+q, ""); r.field("connection", "connected") != true {
		t.Errorf("the page lost its slot: %.300s", r.raw)
	}
}

// waitFreshHold waits until the page's check-in is being held with most of its
// hold still ahead (so the test acts while it is held, not between two holds).
func (tb *tab) waitFreshHold(rt *relayT) {
	tb.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rt.s.mu.Lock()
		sl := rt.s.state.slots[tb.reporter]
		ok := sl != nil && sl.held > 0 && rt.s.nowMs()-sl.tickAt < 800
		rt.s.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatal("the page's check-in was never held")
		}
	}
}

// Issue 10.8: when the page's held check-in drops (the tab closed), the page is
// gone at once: a command for it, or for any page when it was the only one, is
// answered 503 no-page-connected now, not at its deadline (60 s here), and the
// state says not connected.
func TestClosedTabFailsItsCommandsAtOnce(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs, TimeoutMs: 60000})
	tb := openFixture(t, rt.relayT, "")
	tb.waitFreshHold(rt.relayT)
	tb.close()
	rt.waitHeld(0)
	for _, q := range []string{"?reporter=" + tb.reporter, ""} {
		r := recv(t, rt.async("POST", "/__dev-toolbar/commands/flags.set"+q, `{"key":"search.rank","value":9}`), 5*time.Second)
		expectReason(t, r, 503, "no-page-connected")
		if !strings.Contains(r.str("message"), "went away") {
			t.Errorf("message %q", r.str("message"))
		}
	}
	r := rt.do("GET", "/__dev-toolbar/state?reporter="+tb.reporter, "")
	if r.field("connection", "connected") != false {
		t.Errorf("after the tab closed: %.300s", r.raw)
	}
	rt.waitQueued(0)
}

// Issue 11.3: a GET sees the page as of the read. A change made in the page
// itself (not through the relay) is in the very next GET /state, although the
// page's check-in is being held and its throttle would send the snapshot up to
// a second later. The refresh probe that gets it is the relay's own: the page
// answers it without running anything, and no caller ever sees it.
func TestStateIsFresh(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs, RefreshMs: DefaultRefreshMs})
	tb := openFixture(t, rt.relayT, "")
	for i, v := range []int{5, 6, 7, 8} {
		tb.waitFreshHold(rt.relayT)
		tb.eval(fmt.Sprintf(`__DEV_TOOLBAR__.instances.playground.runCommand("flags.set", {key: "search.rank", value: %d}).then(r => r.ok)`, v))
		q := "?reporter=" + tb.reporter
		if i%2 == 1 {
			q = "" // the one-slot answer too
		}
		r := rt.do("GET", "/__dev-toolbar/state"+q, "")
		if got := flagIn(r, "search.rank"); got != fmt.Sprint(v) {
			t.Errorf("GET /state%s right after the page set search.rank=%d: %s", q, v, got)
		}
		if strings.Contains(r.raw, probeID) {
			t.Errorf("the probe shows: %.300s", r.raw)
		}
	}
	st := tb.stats()
	if st["commandsRun"] != 0.0 || st["probesRun"].(float64) < 4 {
		t.Errorf("the page ran %v commands and %v probes, want 0 and ≥ 4", st["commandsRun"], st["probesRun"])
	}
	if got := tb.flag("search.rank"); got != "8" {
		t.Errorf("search.rank %s in the page", got)
	}
	// A caller's command still runs and is answered as usual, with no trace of
	// the probes (their unknown-command answers were swallowed).
	r := rt.do("POST", "/__dev-toolbar/commands/flags.set?reporter="+tb.reporter, `{"key":"search.rank","value":3}`)
	if r.status != 200 || strings.Contains(r.raw, probeID) {
		t.Errorf("%d %.300s", r.status, r.raw)
	}
	rt.waitQueued(0)
}

// flag is a flag's effective value in the page itself (as JSON text).
func (tb *tab) flag(key string) string {
	tb.t.Helper()
	return tb.eval(fmt.Sprintf(`__DEV_TOOLBAR__.instances.playground.read().diagnostics.find(d => d.id === "flags").data.flags.find(f => f.key === %q).effective`, key))
}

// flagIn is a flag's effective value in a state answer (as JSON text).
func flagIn(r resp, key string) string {
	rows, _ := r.field("extensions", "flags", "flags").([]any)
	for _, row := range rows {
		if o, ok := row.(object); ok {
			if k, _ := o.get("key"); k == key {
				v, _ := o.get("effective")
				return strings.TrimSpace(string(render(v)))
			}
		}
	}
	return "(no such flag)"
}

// Issue 11.4: a page running a long command sends no check-ins, and is busy,
// not gone: past staleMs its state is still connected, with the running
// command's id and age, and a parallel command for it is queued (not refused
// no-page-connected) and runs when the long one is done.
func TestBusyPageIsNotGone(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs, StaleMs: 1000, TimeoutMs: 20000, RefreshMs: DefaultRefreshMs})
	tb := openFixture(t, rt.relayT, "")
	q := "?reporter=" + tb.reporter
	long := rt.async("POST", "/__dev-toolbar/commands/demo.sleep"+q, `{"ms":3000}`)
	var r resp
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r = rt.do("GET", "/__dev-toolbar/state"+q, "")
		if age, _ := strconv.Atoi(fmt.Sprint(r.field("connection", "busy", "ageMs"))); age > 1500 {
			break // past staleMs since the page's last check-in
		}
		if time.Now().After(deadline) {
			t.Fatalf("never busy for long: %.400s", r.raw)
		}
	}
	if r.field("connection", "connected") != true || r.field("connection", "stale") != false ||
		r.field("connection", "busy", "commandId") != "demo.sleep" {
		t.Errorf("busy page's connection: %v", r.field("connection"))
	}
	if r2 := rt.do("GET", "/__dev-toolbar/state", ""); r2.field("connection", "busy", "commandId") != "demo.sleep" {
		t.Errorf("one-slot answer: %v", r2.field("connection"))
	}
	// Both posted while the page is busy: for this page, and for any page.
	par := []chan resp{
		rt.async("POST", "/__dev-toolbar/commands/flags.set"+q, `{"key":"search.rank","value":9}`),
		rt.async("POST", "/__dev-toolbar/commands/flags.set", `{"key":"search.rank","value":9}`),
	}
	rt.waitQueued(3)
	if r := recv(t, long, 10*time.Second); r.status != 200 {
		t.Fatalf("demo.sleep: %d %.300s", r.status, r.raw)
	}
	for i, ch := range par {
		// Named by its id, the page is shown by it; otherwise by its public name.
		want := []string{tb.reporter, rt.pub(tb.reporter)}[i]
		if r := recv(t, ch, 10*time.Second); r.status != 200 || r.str("ranIn") != want {
			t.Errorf("parallel run %d: %d %.300s", i, r.status, r.raw)
		}
	}
	if got := tb.flag("search.rank"); got != "9" {
		t.Errorf("search.rank %s in the page", got)
	}
	if st := tb.stats(); st["commandsRun"] != 3.0 {
		t.Errorf("the page ran %v commands, want 3", st["commandsRun"])
	}
	if r := rt.do("GET", "/__dev-toolbar/state"+q, ""); r.has("busy") || r.field("connection", "busy") != nil {
		t.Errorf("still busy: %v", r.field("connection"))
	}
}

// Issue 22.1: a local process that knows everything the relay tells callers
// cannot pose as the page. It never learns the page's reporterId (callers see a
// keyed hash of it); a check-in under any name it was told is refused, and one
// under another name is a page of its own: a command for the page, with its
// input, reaches only the page, and the impostor cannot answer it.
func TestImpostorCannotPoseAsThePage(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs})
	tb := openFixture(t, rt.relayT, "reporterId=auto")
	st := rt.do("GET", "/__dev-toolbar/state", "")
	run := rt.do("POST", "/__dev-toolbar/commands/demo.echo", `{"v":1}`)
	unknown := rt.do("GET", "/__dev-toolbar/commands?reporter=nobody", "")
	if run.status != 200 {
		t.Fatalf("untargeted run: %d %.300s", run.status, run.raw)
	}
	for _, r := range []resp{st, run, unknown, rt.do("GET", "/__dev-toolbar/commands", "")} {
		if strings.Contains(r.raw, tb.reporter) {
			t.Errorf("a caller was shown the page's reporterId: %.400s", r.raw)
		}
	}
	names := []string{fmt.Sprint(st.field("connection", "reporterId")), run.str("ranIn")}
	ids, _ := unknown.field("reporterIds").([]any)
	for _, v := range ids {
		names = append(names, fmt.Sprint(v))
	}
	pub := rt.pub(tb.reporter)
	for _, n := range names {
		if n != pub {
			t.Errorf("the page was shown as %q, want %q", n, pub)
		}
		forged := fmt.Sprintf(`{"protocolVersion":2,"instanceId":"playground","reporterId":%q,"allowRun":true,"snapshot":{"commands":[]},"results":[]}`, n)
		expectReason(t, rt.checkIn(forged), 403, "reserved-reporter-id")
	}

	// The impostor keeps checking in, with no id and with one of its own, answering
	// a token it made up; meanwhile callers run commands on the page by its name.
	stop := make(chan struct{})
	handed := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// No id and no results: held, like an idle page. Its own id: a made-up answer.
			tail := []string{`"results":[]}`, `"reporterId":"impostor","results":[{"token":"c1-00000000000000000000000000000000","outcome":{"ok":true,"result":"forged"}}]}`}[i%2]
			r := rt.checkIn(`{"protocolVersion":2,"instanceId":"playground","allowRun":true,` + tail)
			if p, _ := r.field("pending").([]any); len(p) > 0 {
				handed <- r.raw
			}
		}
	}()
	for i := 0; i < 5; i++ {
		r := rt.do("POST", "/__dev-toolbar/commands/demo.echo?reporter="+pub, fmt.Sprintf(`{"note":"input-%d"}`, i))
		if r.status != 200 || r.str("ranIn") != pub || fmt.Sprint(r.field("result", "note")) != fmt.Sprintf("input-%d", i) {
			t.Errorf("command %d: %d %.300s", i, r.status, r.raw)
		}
	}
	close(stop)
	<-done
	close(handed)
	for raw := range handed {
		t.Errorf("the impostor was handed: %.300s", raw)
	}
	if got := tb.stats()["commandsRun"]; got != 6.0 {
		t.Errorf("the page ran %v commands, want 6", got)
	}
}

// Issue 22.2: an HMR remount (the reporter stops with its check-in held, and a new
// one starts in the same document) loses no untargeted command sent just after it:
// the command goes to the new reporter, never to the held check-in of the old one,
// which drops whatever it is answered with.
func TestRemountLosesNoCommand(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs, TimeoutMs: 4000})
	tb := openFixture(t, rt.relayT, "reporterId=auto")
	for i := 0; i < 4; i++ {
		rt.waitHeld(1)
		tb.eval(`__fixture.remount()`)
		time.Sleep(time.Duration(50+150*i) * time.Millisecond)
		r := rt.do("POST", "/__dev-toolbar/commands/demo.echo", fmt.Sprintf(`{"n":%d}`, i))
		if r.status != 200 || fmt.Sprint(r.field("result", "n")) != fmt.Sprint(i) {
			t.Errorf("command %d after remount %d: %d %.300s", i, i, r.status, r.raw)
		}
	}
}

// Issue 22.4: after one of two tabs closes, an untargeted read shows the page that
// is still there, not the closed tab's snapshot as live; and a page reloaded while
// it runs a command is not kept live and busy for the command's whole deadline.
func TestDepartedPageIsNotServedAsLive(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs})
	a := openFixture(t, rt.relayT, "reporterId=auto")
	b := openFixture(t, rt.relayT, "reporterId=auto")
	pa, pb := rt.pub(a.reporter), rt.pub(b.reporter)
	if r := rt.do("GET", "/__dev-toolbar/state", ""); r.field("connection", "reporterId") != pb {
		t.Fatalf("two tabs: %v", r.field("connection"))
	}
	b.close()
	until(t, 6*time.Second, "the closed tab's state is served", func() (bool, any) {
		r := rt.do("GET", "/__dev-toolbar/state", "")
		c := r.field("connection")
		return r.field("connection", "reporterId") == pa && r.field("connection", "connected") == true, c
	})

	q := "?reporter=" + pa
	_ = rt.async("POST", "/__dev-toolbar/commands/demo.sleep"+q, `{"ms":8000}`)
	until(t, 5*time.Second, "the page never got busy", func() (bool, any) {
		c := rt.do("GET", "/__dev-toolbar/state"+q, "").field("connection")
		return rt.do("GET", "/__dev-toolbar/state"+q, "").field("connection", "busy", "commandId") == "demo.sleep", c
	})
	a.eval(`setTimeout(() => location.reload(), 0), 1`)
	// The reloaded page's reporter is a new one; the old page is judged by its
	// check-ins from then on (gone within --stale-ms), not busy for 10 s.
	until(t, 6*time.Second, "the reloaded page stays busy", func() (bool, any) {
		r := rt.do("GET", "/__dev-toolbar/state"+q, "")
		_, busy := r.field("connection").(object).get("busy")
		return !busy && r.field("connection", "connected") == false, r.field("connection")
	})
}

// until polls cond until it holds, failing with what it last saw after d.
func until(t *testing.T, d time.Duration, what string, cond func() (bool, any)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %v: %v", what, d, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Issue 22.3: a batch of big commands to an idle page: 120 callers of demo.echo
// with 3.5 MiB inputs each (DTB_BIG_BATCH_MIB sets another size), against a page
// that gives up a check-in after 1 s, so answers it cannot read in time and
// outboxes re-sent after a failed check-in both happen. Each caller gets the
// truth: its own result, or a 504 whose pickedUp says whether the page ran its
// command (the page's record says which ran); never a 413 for a result that fits.
func TestBigBatchEachCallerGetsTheTruth(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs, TimeoutMs: 8000})
	tb := openFixture(t, rt.relayT, "reporterId=auto&timeout=1000")
	q := "?reporter=" + rt.pub(tb.reporter)
	const n = 120
	mib := 3.5
	if v, err := strconv.ParseFloat(os.Getenv("DTB_BIG_BATCH_MIB"), 64); err == nil && v > 0 {
		mib = v
	}
	big := strings.Repeat("y", int(mib*(1<<20)))
	start := time.Now()
	var chans []chan resp
	for i := 0; i < n; i++ {
		chans = append(chans, rt.async("POST", "/__dev-toolbar/commands/demo.echo"+q, `{"i":`+strconv.Itoa(i)+`,"s":"`+big+`"}`))
	}
	answers := make([]resp, n)
	for i, ch := range chans {
		answers[i] = recv(t, ch, 60*time.Second)
		answers[i].raw = answers[i].raw[:min(len(answers[i].raw), 300)]
		answers[i].val, answers[i].obj = nil, object{{"reason", answers[i].field("reason")}, {"pickedUp", answers[i].field("pickedUp")}, {"handedOut", answers[i].field("handedOut")}, {"i", answers[i].field("result", "i")}}
	}
	took := time.Since(start)
	// The page's record of what it ran (a command it took may still be running).
	ranSet := map[int]int{}
	readRan := func() {
		var ran []struct{ ID, Input string }
		if err := json.Unmarshal([]byte(tb.eval(`__fixture.ran()`)), &ran); err != nil {
			t.Fatal(err)
		}
		clear(ranSet)
		for _, r := range ran {
			var i int
			if _, err := fmt.Sscanf(r.Input, `{"i":%d,`, &i); err == nil && r.ID == "demo.echo" {
				ranSet[i]++
			}
		}
	}
	var ok, notHanded, dropped, taken, refused []int
	for i, r := range answers {
		switch {
		case r.status == 200 && fmt.Sprint(r.field("i")) == strconv.Itoa(i):
			ok = append(ok, i)
		case r.status == 504 && r.field("pickedUp") == false && r.field("handedOut") == true:
			dropped = append(dropped, i)
		case r.status == 504 && r.field("pickedUp") == false:
			notHanded = append(notHanded, i)
		case r.status == 503 && r.str("reason") == "no-page-connected":
			// Never queued: the page's check-ins (1 s timeout) failed while the
			// relay read the batch, so it was not on the line when this came.
			refused = append(refused, i)
		case r.status == 504 && r.field("pickedUp") == true:
			taken = append(taken, i)
		default:
			t.Errorf("caller %d: %d %s", i, r.status, r.raw)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		readRan()
		all := true
		for _, i := range taken {
			all = all && ranSet[i] > 0
		}
		if all || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%d callers of %.1f MiB in %v: %d answered, %d never handed out, %d handed out and never shown received, %d taken and not answered, %d refused no-page-connected; the page ran %d",
		n, mib, took.Round(time.Millisecond), len(ok), len(notHanded), len(dropped), len(taken), len(refused), len(ranSet))
	for _, i := range append(append([]int{}, ok...), taken...) {
		if ranSet[i] != 1 {
			t.Errorf("caller %d was answered or told pickedUp true; the page ran it %d times", i, ranSet[i])
		}
	}
	for _, i := range append(append(append([]int{}, notHanded...), dropped...), refused...) {
		if ranSet[i] != 0 {
			t.Errorf("caller %d was told pickedUp false; the page ran it %d times", i, ranSet[i])
		}
	}
	if len(ok) == 0 {
		t.Errorf("nothing ran")
	}
}

// Issues 22.2 and 22.3: a page that takes a command in the answer to its check-in
// and drops it (its reporter stops right after the answer comes, as in a hot
// reload of the toolbar) never checks in under that reporter again; its caller
// gets 504 pickedUp false (handedOut true), not pickedUp true.
func TestDroppedCommandIsNotPickedUp(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: DefaultLongPollMs, TimeoutMs: 2000})
	tb := openFixture(t, rt.relayT, "reporterId=auto")
	// The next reporter's fetch remounts the toolbar (stopping that reporter) as
	// soon as an answer hands it a command, before the reporter reads it.
	tb.eval(`(() => {
		const real = window.fetch;
		let armed = true;
		window.fetch = async (...args) => {
			const res = await real(...args);
			const body = await res.clone().json().catch(() => null);
			if (armed && body && Array.isArray(body.pending) && body.pending.length) {
				armed = false;
				window.fetch = real;
				__fixture.remount();
			}
			return res;
		};
		__fixture.remount();
		return __fixture.stats().reporterId;
	})()`)
	var dropper string
	_ = json.Unmarshal([]byte(tb.eval(`__fixture.stats().reporterId`)), &dropper)
	until(t, 5*time.Second, "the new reporter never checked in", func() (bool, any) {
		rt.s.mu.Lock()
		defer rt.s.mu.Unlock()
		sl := rt.s.state.slots[dropper]
		return sl != nil && sl.held > 0, dropper
	})
	r := rt.do("POST", "/__dev-toolbar/commands/demo.echo?reporter="+rt.pub(dropper), `{"n":1}`)
	expectReason(t, r, 504, "timeout")
	jsonEq(t, r.obj[3:5], `{"pickedUp":false,"handedOut":true}`)
	var after string
	_ = json.Unmarshal([]byte(tb.eval(`__fixture.stats().reporterId`)), &after)
	if after == dropper || tb.eval(`__fixture.ran().length`) != "0" {
		t.Errorf("the reporter was not replaced (%s), or its successor ran %s", after, tb.eval(`JSON.stringify(__fixture.ran())`))
	}
}
