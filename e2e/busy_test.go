package e2e

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestBusyPage: while the page runs a long command its reporter sends no
// check-ins, so after staleMs the relay's connection reads stale. A relay that
// knows a command is in flight says so (connection.busy, as dtb relay does):
// dtb state --fresh then reads the page as busy, not gone, and a parallel run is
// page-busy naming the command. The upstream relay does not say it, and there
// the same moment is stale / no-page-connected: this pins both.
func TestBusyPage(t *testing.T) {
	needBrowser(t)
	for _, busy := range []bool{true, false} {
		name := "relay reports busy"
		if !busy {
			name = "upstream relay"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := startUpstream(t, 3000, busy)
			tab := openTab(t, pageOn(up.URL, ""))
			waitConnected(t, up.URL, "")

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			long := make(chan browsertest.Result, 1)
			go func() {
				long <- cli.Exec(ctx, nil, "", "run", "demo.sleep", "ms=7000", "--relay", up.URL)
			}()
			poll(t, 10*time.Second, "the page taking demo.sleep", func() bool { return up.pickedUpCount() == 1 })
			poll(t, 10*time.Second, "the connection going stale", func() bool {
				req, _ := http.NewRequest("GET", up.URL+"/__dev-toolbar/state", nil)
				_, ans, _ := do(t, req)
				return get(ans, "connection", "stale") == true
			})
			if up.pickedUpCount() != 1 {
				t.Fatal("demo.sleep finished before the page went stale: the machine is too slow for this test's 7 s")
			}

			state := dtb(t, "state", "--fresh", "--relay", up.URL)
			t.Log(state.Stderr)
			run := dtb(t, "run", "flags.set", "key=search.rank", "value=9", "--relay", up.URL)
			t.Log(run.Stderr)
			if busy {
				doc := state.OK(t)
				if get(doc, "connection", "busy", "commandId") != "demo.sleep" {
					t.Errorf("connection: %v", get(doc, "connection"))
				}
				if w := state.CommandWarnings(); !reflect.DeepEqual(w, []string{"busy"}) || !strings.Contains(state.Stderr, `\"demo.sleep\"`) {
					t.Errorf("warnings %v; stderr %s", w, state.Stderr)
				}
				e := run.Fails(t, 4, "page-busy")
				if get(e, "busy", "commandId") != "demo.sleep" || !strings.Contains(fmt.Sprint(e["error"]), `"demo.sleep"`) {
					t.Errorf("page-busy document: %v", e)
				}
				if age, _ := get(e, "busy", "ageMs").(float64); age < 3000 {
					t.Errorf("busy.ageMs %v, want ≥ 3000 (the page went stale first)", age)
				}
			} else {
				state.Fails(t, 5, "stale")
				run.Fails(t, 5, "no-page-connected")
			}

			r := <-long
			doc := r.OK(t)
			if slept, _ := get(doc, "result", "sleptMs").(float64); slept < 7000 {
				t.Errorf("demo.sleep: %v", doc)
			}
			// The parallel run did not run, now or later.
			if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab).Stdout, "search.rank"); v != 2.0 {
				t.Errorf("search.rank %v, want 2", v)
			}
			if got := fixtureStat(t, tab, "commandsRun"); got != "1" {
				t.Errorf("the page ran %s commands, want 1", got)
			}
			// Done: fresh again, without a warning.
			r = dtb(t, "state", "--fresh", "--relay", up.URL)
			r.OK(t)
			if w := r.CommandWarnings(); len(w) != 0 {
				t.Errorf("after the command: warnings %v", w)
			}
		})
	}
}

// TestBusyPageThroughDtbRelay: dtb relay knows the command is in flight, so it
// keeps the busy page connected (with connection.busy) past staleMs: dtb state
// --fresh reads it with a busy warning, and a parallel run is queued for the
// page and runs when the long command is done (not no-page-connected, and not
// page-busy either: that is what the client says only when a relay reads the
// page as stale, as the stand-in above does).
func TestBusyPageThroughDtbRelay(t *testing.T) {
	needBrowser(t)
	r := startRelay(t, "--timeout-ms", "20000")
	rid := reporterID("busy")
	tab := openTab(t, r.page("reporterId="+rid))
	waitConnected(t, r.URL, rid)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	long := make(chan browsertest.Result, 1)
	go func() {
		long <- cli.Exec(ctx, nil, "", "run", "demo.sleep", "ms=6000", "--relay", r.URL, "--reporter", rid)
	}()
	poll(t, 15*time.Second, "the page busy past staleMs", func() bool {
		req, _ := http.NewRequest("GET", r.URL+"/__dev-toolbar/state?reporter="+rid, nil)
		_, ans, _ := do(t, req)
		age, _ := get(ans, "connection", "busy", "ageMs").(float64)
		return age > 3500
	})
	state := dtb(t, "state", "--fresh", "--relay", r.URL, "--reporter", rid)
	doc := state.OK(t)
	if get(doc, "connection", "connected") != true || get(doc, "connection", "busy", "commandId") != "demo.sleep" {
		t.Errorf("connection: %v", get(doc, "connection"))
	}
	if w := state.CommandWarnings(); !reflect.DeepEqual(w, []string{"busy"}) {
		t.Errorf("warnings %v; stderr %s", w, state.Stderr)
	}
	run := dtb(t, "run", "flags.set", "key=search.rank", "value=9", "--relay", r.URL, "--reporter", rid)
	if got := run.OK(t); got["ranIn"] != rid {
		t.Errorf("parallel run: %v", got)
	}
	if res := <-long; res.OK(t) == nil {
		t.Error("demo.sleep failed")
	}
	if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab).Stdout, "search.rank"); v != 9.0 {
		t.Errorf("search.rank %v, want 9", v)
	}
	if got := fixtureStat(t, tab, "commandsRun"); got != "2" {
		t.Errorf("the page ran %s commands, want 2", got)
	}
}
