package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// pageOn is the fixture's URL on a relay at base, with URL query knobs.
func pageOn(base, knobs string) string {
	if knobs == "" {
		return base + "/"
	}
	return base + "/?" + knobs
}

// fixtureStat reads one of the page's own counters (window.__fixture.stats()).
func fixtureStat(t *testing.T, tab, key string) string {
	t.Helper()
	return evalIn(t, tab, "__fixture.stats()."+key)
}

// waitIdle waits until the page has sent no snapshot for 2 s: after a command the
// reporter may re-send its snapshot once more (spec §8.4), which on a one-slot
// relay makes that page's snapshot the stored one again.
func waitIdle(t *testing.T, tab string) {
	t.Helper()
	last, since := "", time.Now()
	poll(t, 15*time.Second, "the page going idle", func() bool {
		if n := fixtureStat(t, tab, "snapshotsSent"); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= 2*time.Second
	})
}

// TestReporterOnOneSlotRelay aims --reporter at pages behind a relay that cannot
// target them (the upstream playground relay's one slot, ?reporter= ignored):
// dtb refuses rather than read or run in another tab, and each page's own record
// shows that nothing ran where it should not.
func TestReporterOnOneSlotRelay(t *testing.T) {
	needBrowser(t)

	t.Run("two tabs", func(t *testing.T) {
		t.Parallel()
		up := startUpstream(t, 3000, false)
		a, b := reporterID("upA"), reporterID("upB")
		tabA := openTab(t, pageOn(up.URL, "reporterId="+a))
		waitConnected(t, up.URL, a)
		relay := []string{"--relay", up.URL}

		// One tab: --reporter is that page, checked, and the run lands there.
		doc := dtb(t, append([]string{"run", "flags.set", "key=search.rank", "value=3", "--reporter", a}, relay...)...).OK(t)
		if doc["ranIn"] != a {
			t.Errorf("ran in %v, want %s", doc["ranIn"], a)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tabA).Stdout, "search.rank"); v != 3.0 {
			t.Errorf("tab A: search.rank %v, want 3", v)
		}
		// An id no page has: not found, on every toolbar command, and nothing ran.
		ranA := fixtureStat(t, tabA, "commandsRun")
		for _, args := range [][]string{
			{"state"}, {"commands"},
			{"run", "flags.set", "key=search.rank", "value=4"},
			{"run", "flags.set", "key=search.rank", "value=4", "--no-check"},
		} {
			// One page reports and its snapshot is stored: it could be another page
			// (issue 22.7: a closed tab's snapshot stays), so after a watch dtb says
			// what it saw and what it cannot tell.
			e := dtb(t, append(append(args, "--reporter", "does-not-exist"), relay...)...).Fails(t, 7, "wrong-reporter")
			if e["reporter"] != "does-not-exist" || fmt.Sprint(e["seenReporterIds"]) != "["+a+"]" {
				t.Errorf("%v: %v", args, e)
			}
		}
		if got := fixtureStat(t, tabA, "commandsRun"); got != ranA {
			t.Errorf("tab A ran %s commands, had run %s: an unknown --reporter reached it", got, ranA)
		}

		// A second tab: the relay now holds B's snapshot and hands a command to
		// whichever page checks in next.
		waitIdle(t, tabA)
		tabB := openTab(t, pageOn(up.URL, "reporterId="+b))
		dtb(t, append([]string{"state", "--until", fmt.Sprintf(`.connection.reporterId == %q and .connection.ambiguous`, b), "--timeout", "20s"}, relay...)...).OK(t)
		waitIdle(t, tabB)
		ranA, ranB := fixtureStat(t, tabA, "commandsRun"), fixtureStat(t, tabB, "commandsRun")

		// Reading: B's snapshot is B's, so --reporter B reads it; A's is not there.
		doc = dtb(t, append([]string{"state", "--reporter", b}, relay...)...).OK(t)
		if get(doc, "connection", "reporterId") != b {
			t.Errorf("--reporter B read %v", get(doc, "connection", "reporterId"))
		}
		for _, args := range [][]string{{"state"}, {"commands"}} {
			e := dtb(t, append(append(args, "--reporter", a), relay...)...).Fails(t, 7, "wrong-reporter")
			if msg := fmt.Sprint(e["error"]); e["reporter"] != a || !strings.Contains(msg, "dtb relay") || !strings.Contains(msg, "close the other tabs") {
				t.Errorf("%v --reporter A: %v", args, e)
			}
		}
		// Running: neither page can be targeted while both report.
		for _, rid := range []string{a, b, "does-not-exist"} {
			for _, extra := range [][]string{nil, {"--no-check"}} {
				args := append(append([]string{"run", "flags.set", "key=search.rank", "value=8", "--reporter", rid}, extra...), relay...)
				dtb(t, args...).Fails(t, 7, "wrong-reporter")
			}
		}
		if up.waitingCount() != 0 {
			t.Errorf("a command was queued")
		}
		if got := fixtureStat(t, tabA, "commandsRun"); got != ranA {
			t.Errorf("tab A ran %s commands, had run %s", got, ranA)
		}
		if got := fixtureStat(t, tabB, "commandsRun"); got != ranB {
			t.Errorf("tab B ran %s commands, had run %s", got, ranB)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tabB).Stdout, "search.rank"); v != 2.0 {
			t.Errorf("tab B: search.rank %v, want 2 (untouched)", v)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tabA).Stdout, "search.rank"); v != 3.0 {
			t.Errorf("tab A: search.rank %v, want 3 (untouched)", v)
		}

		// Issue 22.7: B leaves (its reporter stops; its snapshot stays stored) and
		// A, idle, sends none: --reporter A is not "no such page".
		evalIn(t, tabB, "__fixture.teardown()")
		dtb(t, append([]string{"state", "--until", ".connection.reporters == 1", "--timeout", "20s"}, relay...)...).OK(t)
		e := dtb(t, append([]string{"state", "--reporter", a}, relay...)...).Fails(t, 7, "wrong-reporter")
		if msg := fmt.Sprint(e["error"]); !strings.Contains(msg, "idle") || fmt.Sprint(e["seenReporterIds"]) != "["+b+"]" {
			t.Errorf("--reporter A after B left: %v", e)
		}
	})

	t.Run("ranIn differs", func(t *testing.T) {
		t.Parallel()
		// A long staleMs keeps paused A connected while the command waits.
		up := startUpstream(t, 20000, false)
		a, c := reporterID("ranA"), reporterID("ranC")
		tabA := openTab(t, pageOn(up.URL, "reporterId="+a))
		waitConnected(t, up.URL, a)
		// C is open but has not checked in yet: the relay knows only A.
		tabC := openTab(t, pageOn(up.URL, "pause=1&reporterId="+c))
		evalIn(t, tabA, "__fixture.pause()")
		poll(t, 5*time.Second, "A's reporter going idle", func() bool { return fixtureStat(t, tabA, "inFlight") == "false" })

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res := make(chan browsertest.Result, 1)
		go func() {
			res <- cli.Exec(ctx, nil, "", "run", "flags.set", "key=search.rank", "value=5", "--relay", up.URL, "--reporter", a)
		}()
		poll(t, 15*time.Second, "the command waiting at the relay", func() bool { return up.waitingCount() == 1 })
		evalIn(t, tabC, "__fixture.resume()") // C checks in first and takes it
		r := <-res
		e := r.Fails(t, 7, "wrong-reporter")
		if e["ranIn"] != c || e["reporter"] != a || e["command"] != "flags.set" || get(e, "outcome", "ok") != true {
			t.Errorf("wrong-reporter document: %v", e)
		}
		if msg := fmt.Sprint(e["error"]); !strings.Contains(msg, "ran in page "+c) {
			t.Errorf("message: %s", msg)
		}
		// The page's own record: C ran it, A did not.
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tabC).Stdout, "search.rank"); v != 5.0 {
			t.Errorf("tab C: search.rank %v, want 5", v)
		}
		if got := fixtureStat(t, tabA, "commandsRun"); got != "0" {
			t.Errorf("tab A ran %s commands", got)
		}
	})

	t.Run("dtb relay targets the page", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t)
		a, b := reporterID("dtbA"), reporterID("dtbB")
		tabA := openTab(t, r.page("reporterId="+a))
		openTab(t, r.page("reporterId="+b))
		waitConnected(t, r.URL, a)
		waitConnected(t, r.URL, b)
		doc := dtb(t, "run", "flags.set", "key=search.rank", "value=6", "--relay", r.URL, "--reporter", a).OK(t)
		if doc["ranIn"] != a {
			t.Errorf("ran in %v", doc["ranIn"])
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tabA).Stdout, "search.rank"); v != 6.0 {
			t.Errorf("tab A: search.rank %v, want 6", v)
		}
		for _, args := range [][]string{
			{"state"}, {"commands"},
			{"run", "flags.set", "key=search.rank", "value=4"},
			{"run", "flags.set", "key=search.rank", "value=4", "--no-check"},
		} {
			e := dtb(t, append(args, "--reporter", "does-not-exist", "--relay", r.URL)...).Fails(t, 3, "no-such-reporter")
			if ids, _ := e["reporterIds"].([]any); len(ids) != 2 {
				t.Errorf("%v: %v", args, e)
			}
		}
		if got := fixtureStat(t, tabA, "commandsRun"); got != "1" {
			t.Errorf("tab A ran %s commands, want 1", got)
		}
	})
}
