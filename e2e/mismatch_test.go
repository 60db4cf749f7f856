package e2e

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSmallMismatches: issue 11's item 5, through the relay and over CDP.
func TestSmallMismatches(t *testing.T) {
	needBrowser(t)

	t.Run("null for a variant flag", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "variant", "variant=1")
		for name, via := range bothTransports(rid, tab) {
			// The declared schema cannot say null: the check refuses it, and the
			// hint must not turn it into the string "null".
			e := dtb(t, append([]string{"run", "flags.set", "key=checkout.variant", "value=null"}, via...)...).Fails(t, 2, "bad-input")
			msg := fmt.Sprint(e["error"])
			if !strings.Contains(msg, "--no-check") || strings.Contains(msg, "value==null") || e["field"] != "value" {
				t.Errorf("%s: %v", name, e)
			}
			// What the old hint led to: the string "null", which the flag refuses.
			e = dtb(t, append([]string{"run", "flags.set", "key=checkout.variant", "value==null"}, via...)...).Fails(t, 1, "threw")
			if !strings.Contains(fmt.Sprint(e["error"]), "is not a valid variant value") {
				t.Errorf("%s: the string null: %v", name, e)
			}
			// What the hint says to do works: the page takes null.
			dtb(t, append([]string{"run", "flags.set", "key=checkout.variant", "value=treatment"}, via...)...).OK(t)
			dtb(t, append([]string{"run", "flags.set", "key=checkout.variant", "value=null", "--no-check"}, via...)...).OK(t)
			if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab).Stdout, "checkout.variant"); v != nil {
				t.Errorf("%s: checkout.variant = %v after --no-check null, want null", name, v)
			}
		}
	})

	t.Run("BigInt result", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "bigint", "")
		vias := bothTransports(rid, tab)
		relay := dtb(t, append([]string{"run", "demo.bigint"}, vias["relay"]...)...).Fails(t, 1, "threw")
		cdp := dtb(t, append([]string{"run", "demo.bigint"}, vias["cdp"]...)...).Fails(t, 1, "threw")
		const want = "the result could not be serialised — TypeError: Do not know how to serialize a BigInt"
		for name, e := range map[string]map[string]any{"relay": relay, "cdp": cdp} {
			if e["error"] != want || e["command"] != "demo.bigint" {
				t.Errorf("%s: %v", name, e)
			}
			if _, ok := e["waitedMs"].(float64); !ok {
				t.Errorf("%s: no waitedMs: %v", name, e)
			}
		}
		if relay["ranIn"] != rid || relay["status"] != 422.0 {
			t.Errorf("relay: %v", relay)
		}
		if cdp["instanceId"] != "playground" || cdp["via"] != "cdp" {
			t.Errorf("cdp: %v", cdp)
		}
		// The same fields as any other command that threw over CDP.
		other := dtb(t, append([]string{"run", "jobs.explode"}, vias["cdp"]...)...).Fails(t, 1, "threw")
		delete(other, "errorName")
		if keys(other) != keys(cdp) {
			t.Errorf("cdp: BigInt failure has %s, a throw has %s", keys(cdp), keys(other))
		}
	})

	t.Run("dtb commands warns when stale", func(t *testing.T) {
		t.Parallel()
		r := startRelay(t, "--stale-ms", "1000")
		tab := openTab(t, r.page(""))
		waitConnected(t, r.URL, "")
		res := dtb(t, "commands", "--relay", r.URL)
		res.OK(t)
		if w := res.CommandWarnings(); len(w) != 0 {
			t.Errorf("connected: warnings %v", w)
		}
		evalIn(t, tab, "__fixture.pause()")
		poll(t, 10*time.Second, "the page going stale", func() bool {
			return strings.TrimSpace(dtb(t, "state", "--relay", r.URL, "--jq", ".connection.stale").Stdout) == "true"
		})
		res = dtb(t, "commands", "--relay", r.URL)
		doc := res.OK(t)
		if w := res.CommandWarnings(); !reflect.DeepEqual(w, []string{"stale"}) {
			t.Errorf("stale: warnings %v; stderr %s", w, res.Stderr)
		}
		if cmds, _ := doc["commands"].([]any); len(cmds) == 0 {
			t.Errorf("no commands: %v", doc)
		}
	})

	t.Run("unknown command suggests the nearest", func(t *testing.T) {
		t.Parallel()
		rid, tab := openReporter(t, "nearest", "")
		for name, via := range bothTransports(rid, tab) {
			for _, id := range []string{"flags.sett", "flag.set", "falgs.set", "Flags.Set"} {
				e := dtb(t, append([]string{"run", id, "key=search.rank", "value=1"}, via...)...).Fails(t, 3, "unknown-command")
				if e["suggestion"] != "flags.set" || !strings.Contains(fmt.Sprint(e["error"]), `did you mean "flags.set"`) {
					t.Errorf("%s %s: %v", name, id, e)
				}
			}
			e := dtb(t, append([]string{"run", "theme.sat"}, via...)...).Fails(t, 3, "unknown-command")
			if e["suggestion"] != "theme.set" {
				t.Errorf("%s theme.sat: %v", name, e)
			}
		}
		if got := fixtureStat(t, tab, "commandsRun"); got != "0" {
			t.Errorf("the page ran %s commands", got)
		}
	})
}

// keys lists a document's keys, sorted.
func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}
