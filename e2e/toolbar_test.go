package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/relayclient"
)

// TestToolbar drives the toolbar through both transports: the relay (dtb relay
// in front of the fixture app, the page checking in from Chromium) and CDP (the
// in-page global read by dtb over the DevTools protocol). Each subtest opens its
// own tabs and closes them; subtests that need a relay with other options, or no
// other page on it, start their own.
func TestToolbar(t *testing.T) {
	needBrowser(t)

	// The demo runs first and alone, so that its process check sees no other
	// test's processes come and go.
	t.Run("scripts/demo", testDemo)

	t.Run("default transport", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "default", "")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// No --via and no relay URL, the session's browser is up: CDP.
		r := cli.Exec(ctx, nil, "", "state", "--tab", tab, "--jq", ".connection.via")
		r.OK(t)
		if strings.TrimSpace(r.Stdout) != `"cdp"` {
			t.Errorf("without a relay URL: %s", r)
		}
		// A relay URL from the environment means the relay, browser or not.
		r = cli.Exec(ctx, []string{"DTB_RELAY=" + shared.URL}, "", "state", "--reporter", rid, "--jq", ".connection.reporterId")
		r.OK(t)
		if strings.TrimSpace(r.Stdout) != `"`+rid+`"` {
			t.Errorf("with DTB_RELAY: %s", r)
		}
		// No browser session and no relay URL: the default relay, which is not
		// there (exit 5), rather than a launched browser.
		// (No other ports probed: a relay elsewhere on the machine would be found.)
		r = cli.Exec(ctx, []string{"DTB_SESSION=no-such-session-" + rid, portsEnv + "=none"}, "", "state")
		if r.Code != 5 || !strings.Contains(r.Stderr, strings.TrimPrefix(relayclient.DefaultBase, "http://")) {
			t.Errorf("without relay or browser: %s", r)
		}
	})
	t.Run("relay and cdp agree", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "agree", "")

		relayRaw := dtb(t, "state", "--relay", shared.URL, "--reporter", rid)
		cdpRaw := dtb(t, "state", "--via", "cdp", "--tab", tab)
		relayRaw.OK(t)
		cdpRaw.OK(t)
		want := []string{"instanceId", "contractVersion", "visible", "allowRun", "commands", "shell", "diagnostics", "connection", "extensions"}
		if k := topKeys(t, relayRaw.Stdout); !reflect.DeepEqual(k, want) {
			t.Errorf("relay state keys %v, want %v", k, want)
		}
		if k := topKeys(t, cdpRaw.Stdout); !reflect.DeepEqual(k, want) {
			t.Errorf("cdp state keys %v, want %v", k, want)
		}
		for name, r := range map[string]browsertest.Result{"relay": relayRaw, "cdp": cdpRaw} {
			doc := decode(t, r.Stdout)
			checkProjection(t, name, doc)
			c := get(doc, "connection")
			if get(c, "connected") != true || get(c, "ambiguous") != false || get(c, "instanceId") != "playground" || get(c, "allowRun") != true {
				t.Errorf("%s connection: %v", name, c)
			}
		}
		if got := get(decode(t, relayRaw.Stdout), "connection", "reporterId"); got != rid {
			t.Errorf("relay connection.reporterId %v, want %s", got, rid)
		}
		if got := get(decode(t, cdpRaw.Stdout), "connection", "via"); got != "cdp" {
			t.Errorf("cdp connection.via %v", got)
		}

		// Everything but the connection is the same document, byte for byte: key
		// order, number literals and all.
		byteEqual := func(what string, a, b browsertest.Result) {
			t.Helper()
			ma, mb := members(t, a.Stdout), members(t, b.Stdout)
			drop := func(ms [][2]string) (out [][2]string) {
				for _, m := range ms {
					if m[0] != "connection" {
						out = append(out, m)
					}
				}
				return out
			}
			ma, mb = drop(ma), drop(mb)
			if len(ma) != len(mb) {
				t.Errorf("%s: %d members over the relay, %d over CDP", what, len(ma), len(mb))
				return
			}
			for i := range ma {
				if ma[i] != mb[i] {
					t.Errorf("%s: member %d differs:\nrelay: %s = %s\ncdp:   %s = %s", what, i, ma[i][0], ma[i][1], mb[i][0], mb[i][1])
				}
			}
		}
		byteEqual("state", relayRaw, cdpRaw)
		byteEqual("commands", dtb(t, "commands", "--relay", shared.URL, "--reporter", rid), dtb(t, "commands", "--via", "cdp", "--tab", tab))

		// The same, as a user would check it: del(.connection) through --jq.
		a := dtb(t, "state", "--relay", shared.URL, "--reporter", rid, "--jq", "del(.connection)")
		b := dtb(t, "state", "--via", "cdp", "--tab", tab, "--jq", "del(.connection)")
		a.OK(t)
		b.OK(t)
		if a.Stdout != b.Stdout {
			t.Errorf("state differs between transports:\nrelay: %s\ncdp:   %s", a.Stdout, b.Stdout)
		}
		if !reflect.DeepEqual(decode(t, a.Stdout), decode(t, b.Stdout)) {
			t.Errorf("state values differ between transports")
		}

		a = dtb(t, "commands", "--relay", shared.URL, "--reporter", rid, "--jq", "del(.connection)")
		b = dtb(t, "commands", "--via", "cdp", "--tab", tab, "--jq", "del(.connection)")
		a.OK(t)
		b.OK(t)
		if a.Stdout != b.Stdout {
			t.Errorf("commands differ between transports:\nrelay: %s\ncdp:   %s", a.Stdout, b.Stdout)
		}
		cmds := decode(t, a.Stdout)
		if get(cmds, "instanceId") != "playground" || get(cmds, "allowRun") != true {
			t.Errorf("commands document: %s", a.Stdout)
		}
		ids := map[string]bool{}
		for _, c := range get(cmds, "commands").([]any) {
			ids[get(c, "id").(string)] = true
		}
		for _, id := range []string{"flags.set", "demo.throwString", "demo.bigint", "toolbar.teardown"} {
			if !ids[id] {
				t.Errorf("command %s missing: %v", id, ids)
			}
		}

		// A command's result is the same value too, redacted by the page either way.
		a = dtb(t, "run", "env.info", "--relay", shared.URL, "--reporter", rid, "--jq", ".result")
		b = dtb(t, "run", "env.info", "--via", "cdp", "--tab", tab, "--jq", ".result")
		a.OK(t)
		b.OK(t)
		if a.Stdout != b.Stdout {
			t.Errorf("env.info result differs:\nrelay: %s\ncdp:   %s", a.Stdout, b.Stdout)
		}
		res := decode(t, a.Stdout)
		if get(res, "apiKey") != "[redacted]" || get(res, "note") != "Bearer [redacted]" || get(res, "instanceId") != "playground" {
			t.Errorf("env.info result: %s", a.Stdout)
		}
	})

	t.Run("flags.set crosses transports", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "flags", "")
		vias := bothTransports(rid, tab)
		relay, cdp := vias["relay"], vias["cdp"]

		// relay → page, seen over CDP
		doc := dtb(t, append([]string{"run", "flags.set", "key=search.rank", "value=9"}, relay...)...).OK(t)
		if doc["ok"] != true || doc["command"] != "flags.set" || doc["ranIn"] != rid {
			t.Errorf("relay run: %v", doc)
		}
		if _, ok := doc["waitedMs"].(float64); !ok {
			t.Errorf("relay run without waitedMs: %v", doc)
		}
		if _, ok := doc["result"]; ok {
			t.Errorf("flags.set returns nothing, got result: %v", doc)
		}
		if v := flagEffective(t, dtb(t, append([]string{"state"}, cdp...)...).Stdout, "search.rank"); v != 9.0 {
			t.Errorf("over CDP after relay set: search.rank = %v, want 9", v)
		}
		// The follow-up check-in carried a fresh snapshot: the relay has it too.
		if v := flagEffective(t, dtb(t, append([]string{"state"}, relay...)...).Stdout, "search.rank"); v != 9.0 {
			t.Errorf("over the relay right after its run: search.rank = %v, want 9", v)
		}

		// CDP → page, seen through the relay (on a later check-in)
		doc = dtb(t, append([]string{"run", "flags.set", "key=search.rank", "value=4"}, cdp...)...).OK(t)
		if doc["ok"] != true || doc["command"] != "flags.set" || doc["via"] != "cdp" {
			t.Errorf("cdp run: %v", doc)
		}
		r := dtb(t, append([]string{"state", "--until", `.extensions.flags.flags[] | select(.key == "search.rank") | .effective == 4`, "--timeout", "10s"}, relay...)...)
		r.OK(t)
		if v := flagEffective(t, r.Stdout, "search.rank"); v != 4.0 {
			t.Errorf("relay after cdp set: %v", v)
		}

		// A refused value: threw, with the page's own message, through both.
		const msg = `"new-header" is a boolean flag; "yes" is not a valid boolean value.`
		for name, via := range vias {
			e := dtb(t, append([]string{"run", "flags.set", "key=new-header", "value=yes"}, via...)...).Fails(t, 1, "threw")
			if e["error"] != msg || e["errorName"] != "TypeError" || e["command"] != "flags.set" {
				t.Errorf("%s: threw document %v", name, e)
			}
			if name == "relay" && e["status"] != 422.0 {
				t.Errorf("relay: status %v, want 422", e["status"])
			}
		}
		if v := flagEffective(t, dtb(t, append([]string{"state"}, cdp...)...).Stdout, "new-header"); v != true {
			t.Errorf("a refused set changed new-header to %v", v)
		}
	})

	t.Run("no page connected", func(t *testing.T) {
		t.Parallel()
		fresh := startRelay(t)
		e := dtb(t, "state", "--relay", fresh.URL).Fails(t, 5, "no-page-connected")
		if get(e, "connection", "connected") != false || get(e, "connection", "checkedInAt") != nil {
			t.Errorf("no-page document: %v", e)
		}
		dtb(t, "commands", "--relay", fresh.URL).Fails(t, 5, "no-page-connected")
		dtb(t, "run", "flags.set", "key=search.rank", "value=1", "--relay", fresh.URL).Fails(t, 5, "no-page-connected")
		e = dtb(t, "run", "flags.set", "key=search.rank", "value=1", "--no-check", "--relay", fresh.URL).Fails(t, 5, "no-page-connected")
		if e["status"] != 503.0 {
			t.Errorf("POST with no page: %v", e)
		}

		// --until gives up: exit 4, saying what it last saw.
		r := dtb(t, "state", "--relay", fresh.URL, "--until", ".connection.connected", "--timeout", "1s", "--interval", "100ms")
		e = r.Fails(t, 4, "timeout")
		if e["lastReason"] != "no-page-connected" {
			t.Errorf("timeout document: %v", e)
		}
		if r.Elapsed > 5*time.Second {
			t.Errorf("--timeout 1s took %s", r.Elapsed)
		}

		// --until waits for the page, which is opened while it polls.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		waiting := make(chan browsertest.Result, 1)
		go func() {
			waiting <- cli.Exec(ctx, nil, "", "state", "--relay", fresh.URL, "--until", ".connection.connected", "--timeout", "20s")
		}()
		time.Sleep(300 * time.Millisecond) // let it poll a few times with nothing there
		openTab(t, fresh.page(""))
		r = <-waiting
		doc := r.OK(t)
		if get(doc, "connection", "connected") != true || get(doc, "shell", "mounted") != true {
			t.Errorf("--until returned %s", r.Stdout)
		}

		// A predicate that never holds on a connected page: exit 4 with lastState.
		e = dtb(t, "state", "--relay", fresh.URL, "--until", ".visible == false", "--timeout", "1s").Fails(t, 4, "timeout")
		if get(e, "lastState", "visible") != true {
			t.Errorf("timeout with a page: %v", e)
		}
	})

	t.Run("allowRun=0", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "readonly", "allowRun=0")
		doc := dtb(t, "state", "--relay", shared.URL, "--reporter", rid).OK(t)
		if get(doc, "allowRun") != false || get(doc, "connection", "allowRun") != false {
			t.Errorf("state of a read-only page: allowRun %v / %v", get(doc, "allowRun"), get(doc, "connection", "allowRun"))
		}
		e := dtb(t, "run", "flags.set", "key=search.rank", "value=3", "--relay", shared.URL, "--reporter", rid).Fails(t, 6, "run-not-allowed")
		if e["status"] != 403.0 {
			t.Errorf("relay refusal: %v", e)
		}
		dtb(t, "run", "flags.set", "key=search.rank", "value=3", "--via", "cdp", "--tab", tab).Fails(t, 6, "run-not-allowed")
		// Nothing ran.
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab).Stdout, "search.rank"); v != 2.0 {
			t.Errorf("search.rank = %v after refused runs", v)
		}
	})

	t.Run("unknown command", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "unknown", "")
		for name, via := range bothTransports(rid, tab) {
			// dtb's own check against the command list
			e := dtb(t, append([]string{"run", "nope.nothing"}, via...)...).Fails(t, 3, "unknown-command")
			if _, asked := e["ranIn"]; asked {
				t.Errorf("%s: the check should answer before the page: %v", name, e)
			}
			// the page's answer
			e = dtb(t, append([]string{"run", "nope.nothing", "--no-check"}, via...)...).Fails(t, 3, "unknown-command")
			if e["command"] != "nope.nothing" {
				t.Errorf("%s --no-check: %v", name, e)
			}
			switch name {
			case "relay":
				if e["status"] != 404.0 || e["ranIn"] != rid {
					t.Errorf("relay --no-check: want the page's 404 from %s: %v", rid, e)
				}
			case "cdp":
				if e["via"] != "cdp" {
					t.Errorf("cdp --no-check: %v", e)
				}
			}
		}
	})

	t.Run("non-Error throw and BigInt result", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "throws", "")
		for name, via := range bothTransports(rid, tab) {
			e := dtb(t, append([]string{"run", "demo.throwString"}, via...)...).Fails(t, 1, "threw")
			if e["error"] != "plain string thrown" {
				t.Errorf("%s: %v", name, e)
			}
			if _, has := e["errorName"]; has {
				t.Errorf("%s: a thrown string has no errorName: %v", name, e)
			}
			e = dtb(t, append([]string{"run", "jobs.explode"}, via...)...).Fails(t, 1, "threw")
			if e["error"] != "the job exploded" || e["errorName"] != "RangeError" {
				t.Errorf("%s: %v", name, e)
			}
			e = dtb(t, append([]string{"run", "demo.bigint"}, via...)...).Fails(t, 1, "threw")
			if msg, _ := e["error"].(string); !strings.Contains(msg, "could not be serialised") || !strings.Contains(msg, "BigInt") {
				t.Errorf("%s: %v", name, e)
			}
		}
	})

	t.Run("torn down", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "teardown", "")
		relay := bothTransports(rid, tab)["relay"]
		dtb(t, append([]string{"run", "toolbar.teardown", "zombie=true"}, relay...)...).OK(t)
		poll(t, 5*time.Second, "teardown", func() bool {
			return evalIn(t, tab, "__fixture.stats().tornDown") == "true"
		})
		// The zombie reporter still checks in and answers: torn-down, 409.
		e := dtb(t, append([]string{"run", "flags.set", "key=search.rank", "value=5"}, relay...)...).Fails(t, 1, "torn-down")
		if e["status"] != 409.0 || e["ranIn"] != rid {
			t.Errorf("relay torn-down: %v", e)
		}
		// Over CDP the global is gone with the last instance: no toolbar at all.
		e = dtb(t, "state", "--via", "cdp", "--tab", tab).Fails(t, 5, "no-toolbar")
		if e["detail"] != "absent" {
			t.Errorf("cdp state after teardown: %v", e)
		}
		dtb(t, "run", "flags.set", "key=search.rank", "value=5", "--no-check", "--via", "cdp", "--tab", tab).Fails(t, 5, "no-toolbar")

		// One of two instances torn down: that one is gone, the other answers.
		tab2 := openTab(t, shared.page("instance=a,b&report=0"))
		evalIn(t, tab2, `__fixture.teardown("a")`)
		e = dtb(t, "state", "--via", "cdp", "--tab", tab2, "--instance", "a").Fails(t, 3, "no-such-instance")
		if !reflect.DeepEqual(e["instances"], []any{"b"}) {
			t.Errorf("no-such-instance: %v", e)
		}
		doc := dtb(t, "state", "--via", "cdp", "--tab", tab2).OK(t)
		if get(doc, "instanceId") != "b" {
			t.Errorf("the remaining instance: %v", get(doc, "instanceId"))
		}
	})

	t.Run("timeout without pickup", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t, "--timeout-ms", "1500", "--stale-ms", "10000")
		tab := openTab(t, r.page(""))
		waitConnected(t, r.URL, "")
		evalIn(t, tab, "__fixture.pause()")
		// A check-in held open when the reporter paused would still pick the
		// command up; wait until none is in flight.
		poll(t, 5*time.Second, "the reporter going idle", func() bool {
			return evalIn(t, tab, "__fixture.stats().inFlight") == "false"
		})
		res := dtb(t, "run", "flags.set", "key=search.rank", "value=2", "--relay", r.URL)
		e := res.Fails(t, 4, "timeout")
		if e["pickedUp"] != false || e["command"] != "flags.set" || e["status"] != 504.0 {
			t.Errorf("504 without pickup: %v", e)
		}
		if msg, _ := e["error"].(string); !strings.Contains(msg, "No page picked up") {
			t.Errorf("message: %v", e)
		}
		if w, _ := e["waitedMs"].(float64); w < 1400 || res.Elapsed > 8*time.Second {
			t.Errorf("waitedMs %v, elapsed %s", e["waitedMs"], res.Elapsed)
		}
	})

	t.Run("timeout after pickup", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t, "--timeout-ms", "1500", "--stale-ms", "10000")
		tab := openTab(t, r.page("nopickup=1"))
		waitConnected(t, r.URL, "")
		res := dtb(t, "run", "flags.set", "key=search.rank", "value=2", "--relay", r.URL)
		e := res.Fails(t, 4, "timeout")
		// The page reported on nothing it was handed, so it never showed it had
		// the command: handed out, not picked up (docs/relay.md "What pickedUp
		// means").
		if e["pickedUp"] != false || e["handedOut"] != true || e["command"] != "flags.set" || e["status"] != 504.0 {
			t.Errorf("504 after pickup: %v", e)
		}
		if msg, _ := e["error"].(string); !strings.Contains(msg, "has not shown that it received it") {
			t.Errorf("message: %v", e)
		}
		// (dtb relay's refresh probe, sent when the test read the state, is held
		// too by this page that answers nothing: not a caller's command.)
		if held := evalIn(t, tab, `__fixture.stats().heldIds.filter(id => !id.startsWith("__dtb_relay__."))`); held != `["flags.set"]` {
			t.Errorf("the page holds %s, want flags.set once", held)
		}
	})

	t.Run("two tabs are ambiguous", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t)
		one, two := reporterID("amb"), reporterID("amb")
		tab1 := openTab(t, r.page("reporterId="+one))
		tab2 := openTab(t, r.page("reporterId="+two))
		waitConnected(t, r.URL, one)
		waitConnected(t, r.URL, two)

		res := dtb(t, "state", "--relay", r.URL)
		doc := res.OK(t)
		if get(doc, "connection", "ambiguous") != true || get(doc, "connection", "reporters") != 2.0 {
			t.Errorf("connection: %v", get(doc, "connection"))
		}
		if w := res.CommandWarnings(); !reflect.DeepEqual(w, []string{"ambiguous"}) {
			t.Errorf("warnings %v, want [ambiguous]; stderr %s", w, res.Stderr)
		}
		e := dtb(t, "state", "--relay", r.URL, "--strict").Fails(t, 7, "ambiguous-reporters")
		if get(e, "connection", "reporters") != 2.0 {
			t.Errorf("strict: %v", e)
		}
		// An untargeted run says it may go to either page (issue 22.8).
		res = dtb(t, "run", "flags.set", "key=greeting", "value=hi", "--relay", r.URL)
		res.OK(t)
		if w := res.CommandWarnings(); !reflect.DeepEqual(w, []string{"ambiguous"}) {
			t.Errorf("run warnings %v, want [ambiguous]; stderr %s", w, res.Stderr)
		}

		// --reporter picks the second tab, for reads and runs.
		res = dtb(t, "state", "--relay", r.URL, "--reporter", two, "--strict")
		doc = res.OK(t)
		if get(doc, "connection", "reporterId") != two || get(doc, "connection", "ambiguous") != false {
			t.Errorf("--reporter state connection: %v", get(doc, "connection"))
		}
		if w := res.CommandWarnings(); len(w) != 0 {
			t.Errorf("--reporter warns %v", w)
		}
		doc = dtb(t, "commands", "--relay", r.URL, "--reporter", two).OK(t)
		if get(doc, "connection", "reporterId") != two {
			t.Errorf("--reporter commands: %v", get(doc, "connection"))
		}
		doc = dtb(t, "run", "flags.set", "key=search.rank", "value=7", "--relay", r.URL, "--reporter", two).OK(t)
		if doc["ranIn"] != two {
			t.Errorf("ran in %v, want %s", doc["ranIn"], two)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab2).Stdout, "search.rank"); v != 7.0 {
			t.Errorf("second tab: search.rank %v, want 7", v)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab1).Stdout, "search.rank"); v != 2.0 {
			t.Errorf("first tab: search.rank %v, want 2 (untouched)", v)
		}
		if v := flagEffective(t, dtb(t, "state", "--relay", r.URL, "--reporter", two).Stdout, "search.rank"); v != 7.0 {
			t.Errorf("relay, second tab: search.rank %v, want 7", v)
		}
		e = dtb(t, "state", "--relay", r.URL, "--reporter", "nobody-"+two).Fails(t, 3, "no-such-reporter")
		if ids, _ := e["reporterIds"].([]any); len(ids) != 2 {
			t.Errorf("unknown reporter: %v", e)
		}
	})

	t.Run("protocol mismatch", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t)
		tab := openTab(t, r.page("protocolVersion=3"))
		poll(t, 10*time.Second, "two refused check-ins", func() bool {
			return evalIn(t, tab, "__fixture.stats().checkIns >= 2 && __fixture.stats().lastStatus === 400 && __fixture.stats().ok === 0") == "true"
		})
		e := dtb(t, "state", "--relay", r.URL).Fails(t, 5, "no-page-connected")
		if get(e, "connection", "checkedInAt") != nil || get(e, "connection", "connected") != false {
			t.Errorf("a refused page connected: %v", e)
		}
		// What the page was told: replay its own last check-in.
		var body string
		if err := json.Unmarshal([]byte(evalIn(t, tab, "__fixture.stats().lastBody")), &body); err != nil {
			t.Fatal(err)
		}
		status, ans := post(t, r.URL+"/__dev-toolbar/state", "", "", strings.NewReader(body), int64(len(body)))
		if status != 400 || ans["reason"] != "protocol-mismatch" || ans["expected"] != 2.0 || ans["received"] != 3.0 {
			t.Errorf("replayed check-in: %d %v", status, ans)
		}
		// The bridge itself is fine over CDP.
		if doc := dtb(t, "state", "--via", "cdp", "--tab", tab).OK(t); get(doc, "instanceId") != "playground" {
			t.Errorf("cdp: %v", get(doc, "instanceId"))
		}
	})

	t.Run("foreign origin and host", func(t *testing.T) {
		t.Parallel()
		host := hostPort(t, shared.URL)
		for _, tc := range []struct {
			name, method, path, host, origin, reason string
		}{
			{"foreign origin GET", "GET", "/__dev-toolbar/state", "", "https://evil.example", "cross-origin"},
			{"foreign origin POST check-in", "POST", "/__dev-toolbar/state", "", "http://evil.example", "cross-origin"},
			{"foreign origin command", "POST", "/__dev-toolbar/commands/flags.set", "", "http://localhost:1", "cross-origin"},
			{"non-loopback host", "GET", "/__dev-toolbar/state", "evil.example:" + strings.Split(host, ":")[1], "", "non-loopback-host"},
			{"0.0.0.0 host", "GET", "/__dev-toolbar/commands", "0.0.0.0", "", "non-loopback-host"},
			{"non-loopback host on the static app", "GET", "/index.html", "evil.example", "", "non-loopback-host"},
		} {
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(`{"protocolVersion":2,"instanceId":"evil","reporterId":"evil","allowRun":true,"results":[]}`)
			}
			req, err := http.NewRequest(tc.method, shared.URL+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			status, ans, ctype := do(t, req)
			if status != 403 || ans["reason"] != tc.reason || ans["ok"] != false || !strings.HasPrefix(ctype, "application/json") {
				t.Errorf("%s: %d %s %v", tc.name, status, ctype, ans)
			}
		}
		// The page's own origin passes.
		req, _ := http.NewRequest("GET", shared.URL+"/__dev-toolbar/commands", nil)
		req.Header.Set("Origin", "http://"+host)
		if status, ans, _ := do(t, req); status == 403 {
			t.Errorf("same origin refused: %v", ans)
		}
		// Nothing from the refused check-in was recorded.
		unknownReporter(t, dtb(t, "state", "--relay", shared.URL, "--reporter", "evil"))
	})

	t.Run("over-size body", func(t *testing.T) {
		t.Parallel()
		big := bytes.Repeat([]byte("a"), 5<<20)
		body := append(append([]byte(`{"protocolVersion":2,"results":[],"pad":"`), big...), '"', '}')
		for _, known := range []bool{true, false} {
			var rd io.Reader = bytes.NewReader(body)
			n := int64(len(body))
			if !known {
				rd, n = io.MultiReader(rd), -1 // chunked: the relay finds out while reading
			}
			status, ans := post(t, shared.URL+"/__dev-toolbar/state", "application/json", "", rd, n)
			if status != 400 || ans["reason"] != "bad-body" || !strings.Contains(fmt.Sprint(ans["message"]), "exceeds") {
				t.Errorf("5 MiB check-in (length known %v): %d %v", known, status, ans)
			}
		}
		// The relay is still serving.
		unknownReporter(t, dtb(t, "state", "--relay", shared.URL, "--reporter", "nobody"))
	})

	t.Run("relay shutdown answers a waiting run", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t, "--timeout-ms", "30000")
		tab := openTab(t, r.page("nopickup=1"))
		waitConnected(t, r.URL, "")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		waiting := make(chan browsertest.Result, 1)
		go func() {
			waiting <- cli.Exec(ctx, nil, "", "run", "flags.set", "key=search.rank", "value=8", "--relay", r.URL)
		}()
		// (The refresh probe a state read sends is held too: not the command.)
		poll(t, 10*time.Second, "the page holding the command", func() bool {
			return evalIn(t, tab, `__fixture.stats().heldIds.filter(id => !id.startsWith("__dtb_relay__.")).length`) == "1"
		})
		start := time.Now()
		if code := r.stop(); code != 0 {
			t.Errorf("relay exit %d after SIGTERM, want 0; stderr: %s", code, r.stderr)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("the relay took %s to stop", d)
		}
		res := <-waiting
		e := res.Fails(t, 5, "server-closing")
		if e["status"] != 503.0 {
			t.Errorf("waiting run: %v", e)
		}
		if browsertest.Alive(r.PID) {
			t.Errorf("relay pid %d still alive", r.PID)
		}
	})

	t.Run("cdp instances and no bridge", func(t *testing.T) {
		t.Parallel()
		tab := openTab(t, shared.page("instance=a,b&report=0"))
		for _, args := range [][]string{
			{"state", "--via", "cdp", "--tab", tab},
			{"commands", "--via", "cdp", "--tab", tab},
			{"run", "flags.set", "key=search.rank", "value=6", "--via", "cdp", "--tab", tab},
		} {
			e := dtb(t, args...).Fails(t, 7, "ambiguous-instance")
			// The message lists the ids and names the tab by its URL.
			if !reflect.DeepEqual(e["instances"], []any{"a", "b"}) || !strings.Contains(fmt.Sprint(e["error"]), "(a, b)") ||
				!strings.Contains(fmt.Sprint(e["error"]), shared.URL+"/?instance=a,b") {
				t.Errorf("dtb %s: %v", args[0], e)
			}
		}
		doc := dtb(t, "state", "--via", "cdp", "--tab", tab, "--instance", "b").OK(t)
		if get(doc, "instanceId") != "b" || !reflect.DeepEqual(get(doc, "connection", "instances"), []any{"a", "b"}) {
			t.Errorf("--instance b: %v %v", get(doc, "instanceId"), get(doc, "connection"))
		}
		doc = dtb(t, "run", "flags.set", "key=search.rank", "value=6", "--via", "cdp", "--tab", tab, "--instance", "b").OK(t)
		if doc["ok"] != true || doc["instanceId"] != "b" {
			t.Errorf("run --instance b: %v", doc)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab, "--instance", "b").Stdout, "search.rank"); v != 6.0 {
			t.Errorf("b: %v", v)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab, "--instance", "a").Stdout, "search.rank"); v != 2.0 {
			t.Errorf("a: %v (untouched)", v)
		}
		e := dtb(t, "state", "--via", "cdp", "--tab", tab, "--instance", "c").Fails(t, 3, "no-such-instance")
		if !reflect.DeepEqual(e["instances"], []any{"a", "b"}) {
			t.Errorf("no-such-instance: %v", e)
		}
		// --instance means CDP; through a relay it is a usage error.
		dtb(t, "state", "--relay", shared.URL, "--instance", "b").Fails(t, 2, "usage")

		blank := openTab(t, "about:blank")
		e = dtb(t, "state", "--via", "cdp", "--tab", blank).Fails(t, 5, "no-toolbar")
		if e["detail"] != "absent" || get(e, "tab", "url") != "about:blank" || get(e, "tab", "id") != blank ||
			!strings.Contains(fmt.Sprint(e["error"]), "(about:blank)") {
			t.Errorf("about:blank: %v", e)
		}
		dtb(t, "run", "flags.set", "--no-check", "--via", "cdp", "--tab", blank).Fails(t, 5, "no-toolbar")
		foreign := openTab(t, shared.page("foreign=1&report=0"))
		e = dtb(t, "state", "--via", "cdp", "--tab", foreign).Fails(t, 5, "no-toolbar")
		if e["detail"] != "not-a-registry" {
			t.Errorf("foreign global: %v", e)
		}
	})
}

// checkProjection: extensions has one key per diagnostics entry, its data when
// the entry is ok, else null.
func checkProjection(t *testing.T, name string, doc any) {
	t.Helper()
	diags, _ := get(doc, "diagnostics").([]any)
	ext, _ := get(doc, "extensions").(map[string]any)
	if len(diags) == 0 || ext == nil {
		t.Fatalf("%s: no diagnostics or extensions", name)
	}
	ids := map[string]bool{}
	statuses := map[string]bool{}
	for _, d := range diags {
		id := get(d, "id").(string)
		ids[id] = true
		statuses[get(d, "status").(string)] = true
		want := any(nil)
		if get(d, "status") == "ok" {
			want = get(d, "data")
		}
		if got, present := ext[id]; !present || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: extensions[%s] = %v, want %v", name, id, got, want)
		}
	}
	if len(ext) != len(ids) {
		t.Errorf("%s: extensions has %d keys, diagnostics %d entries", name, len(ext), len(ids))
	}
	if !statuses["ok"] || !statuses["absent"] || !statuses["failed"] {
		t.Errorf("%s: the fixture publishes ok, absent and failed entries; got %v", name, statuses)
	}
}

// do sends a request and decodes a JSON answer.
func do(t *testing.T, req *http.Request) (int, map[string]any, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL, err)
	}
	var ans map[string]any
	json.Unmarshal(b, &ans)
	return resp.StatusCode, ans, resp.Header.Get("Content-Type")
}

func post(t *testing.T, u, ctype, origin string, body io.Reader, n int64) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = n
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	status, ans, _ := do(t, req)
	return status, ans
}

// testDemo runs scripts/demo and checks that it leaves no chromium or dtb
// process behind. Other programs on the machine may start browsers meanwhile, so
// a process counts as the demo's when it carries the demo's environment marker or
// sits in a process group of one that did (Chromium's helpers get a clean
// environment but stay in the browser's group).
func testDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("scripts/demo builds dtb and starts its own browser and relay: skipped with -short")
	}
	// Not a DTB_ name: the session host the demo's first browser command
	// starts keeps its starter's environment except dtb's settings, and
	// launches the browser with it, so both carry the mark.
	mark := fmt.Sprintf("E2E_DTB_DEMO=%d-%d", os.Getpid(), time.Now().UnixNano())
	before := procs()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.Command("scripts/demo")
	cmd.Dir = root
	cmd.Env = append(browsertest.CleanEnv(), mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, not go test's
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	groups := map[int]bool{cmd.Process.Pid: true}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	for waiting := true; waiting; {
		for _, p := range procs() {
			if p.marked(mark) {
				groups[p.pgid] = true
			}
		}
		select {
		case err = <-done:
			waiting = false
		case <-ctx.Done():
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
			waiting = false
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatalf("scripts/demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{`"connected":true`, `"ok":true,"command":"flags.set"`, `"reason":"threw"`, `"via":"cdp"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %s:\n%s", want, out.String())
		}
	}
	if len(groups) < 2 {
		t.Errorf("never saw the demo's browser running (process groups %v): the leak check would see nothing", groups)
	}
	var left map[int]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = map[int]string{}
		for pid, p := range procs() {
			if _, old := before[pid]; !old && (p.marked(mark) || groups[p.pgid]) && (p.browser() || p.base() == "dtb") {
				left[pid] = p.exe
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("scripts/demo left processes behind: %v", left)
		now := procs()
		for pid := range left {
			if p, ok := now[pid]; ok && p.pgid > 1 && p.pgid != syscall.Getpgrp() {
				syscall.Kill(-p.pgid, syscall.SIGKILL)
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

type proc struct {
	exe  string
	pgid int
	env  []byte
}

func (p proc) base() string { return p.exe[strings.LastIndexByte(p.exe, '/')+1:] }

func (p proc) browser() bool {
	b := p.base()
	return strings.HasPrefix(b, "chrom") || strings.HasPrefix(b, "headless_shell")
}

func (p proc) marked(mark string) bool {
	return bytes.Contains(append(append([]byte{0}, p.env...), 0), append(append([]byte{0}, mark...), 0))
}

// procs lists the live processes of this user that /proc shows.
func procs() map[int]proc {
	entries, _ := os.ReadDir("/proc")
	out := map[int]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !browsertest.Alive(pid) {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		j := strings.LastIndexByte(s, ')')
		var state string
		var ppid, pgid int
		if j < 0 {
			continue
		}
		if _, err := fmt.Sscanf(s[j+2:], "%s %d %d", &state, &ppid, &pgid); err != nil {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		out[pid] = proc{exe: strings.TrimSuffix(exe, " (deleted)"), pgid: pgid, env: env}
	}
	return out
}

// unknownReporter requires the refusal of a reporter the relay does not know:
// no-such-reporter while other pages report to it (the shared relay's
// parallel subtests), no-page-connected when none does.
func unknownReporter(t *testing.T, r browsertest.Result) {
	t.Helper()
	if r.Code == 3 {
		r.Fails(t, 3, "no-such-reporter")
		return
	}
	r.Fails(t, 5, "no-page-connected")
}
