package relay

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// reporterPage is a minimal page with the upstream reporter's timing (spec §3):
// first check-in at once, then every 500 ms with one in-flight slot, each command
// followed by an immediate follow-up carrying its result and a fresh snapshot.
const reporterPage = `<!doctype html><html><body><script>
const reporterId = crypto.randomUUID();
let inFlight = false, outbox = [], lastSnap = null, counter = 0;
function read() {
  return {instanceId: "playground", contractVersion: 2, visible: true, allowRun: true,
    commands: [{id: "flags.set", label: "Set"}], shell: {mounted: true},
    diagnostics: [{id: "flags", label: "Flags", status: "ok", data: {counter}}]};
}
async function post(results, snapshot) {
  const body = {protocolVersion: 2, instanceId: "playground", reporterId, allowRun: true};
  if (snapshot) body.snapshot = snapshot;
  body.results = results;
  const res = await fetch("/__dev-toolbar/state", {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify(body), credentials: "omit", cache: "no-store", signal: AbortSignal.timeout(5000)});
  if (!res.ok) throw new Error(String(res.status));
  return await res.json();
}
async function pump() {
  if (inFlight) return;
  inFlight = true;
  const results = outbox.splice(0);
  try {
    const snap = read(), json = JSON.stringify(snap);
    const r = await post(results, json !== lastSnap ? snap : undefined);
    lastSnap = json;
    const queue = Array.isArray(r.pending) ? r.pending : [];
    while (queue.length) {
      const c = queue.shift();
      counter++;
      const fresh = read();
      lastSnap = JSON.stringify(fresh);
      const f = await post([{token: c.token, outcome: {ok: true}}], fresh);
      if (Array.isArray(f.pending)) queue.push(...f.pending);
    }
  } catch (e) { outbox.push(...results); } finally { inFlight = false; }
}
setTimeout(pump, 0);
setInterval(pump, 500);
</script></body></html>`

// TestBrowserRoundTrip measures command round trips against headless Chromium
// (the shared test harness's launch) running reporterPage, with and without the
// long-poll. Opt-in (it takes ~1 min):
// DTB_RELAY_BROWSER_BENCH=1 go test -run BrowserRoundTrip -v ./internal/relay/
func TestBrowserRoundTrip(t *testing.T) {
	if os.Getenv("DTB_RELAY_BROWSER_BENCH") == "" {
		t.Skip("set DTB_RELAY_BROWSER_BENCH=1 to measure against headless Chromium")
	}
	bins := browsertest.Find()
	chrome := cmp.Or(bins.Chrome, bins.Preferred())
	browsertest.Need(t, chrome, "Chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One browser for both series, in its own process group: Stop ends its helpers
	// too, also after a t.Fatal.
	browser, err := browsertest.Launch(ctx, chrome)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(browser.Stop)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(reporterPage), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, lp := range []int{DefaultLongPollMs, 0} {
		s, err := New(Options{Listen: "127.0.0.1:0", Static: dir, LongPollMs: lp})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := s.Listen()
		if err != nil {
			t.Fatal(err)
		}
		sctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.Serve(sctx) }()
		rt := &relayT{t: t, s: s, url: "http://" + addr.String()}
		tab := devtools(t, "PUT", browser.Endpoint+"/json/new?"+rt.url+"/index.html")
		for i := 0; rt.do("GET", "/__dev-toolbar/state", "").status != 200; i++ {
			if i > 100 {
				t.Fatal("the page never reported")
			}
			time.Sleep(100 * time.Millisecond)
		}
		roundTrip := func() time.Duration {
			start := time.Now()
			if r := rt.do("POST", "/__dev-toolbar/commands/flags.set", `{"key":"search.rank","value":9}`); r.status != 200 {
				t.Fatalf("%d %s", r.status, r.raw)
			}
			return time.Since(start)
		}
		var random, b2b series
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 20; i++ {
			time.Sleep(time.Duration(rng.Intn(600)) * time.Millisecond)
			random = append(random, roundTrip())
		}
		for i := 0; i < 20; i++ {
			b2b = append(b2b, roundTrip())
		}
		t.Logf("LongPollMs %d: random moments %v", lp, random)
		t.Logf("LongPollMs %d: back to back   %v", lp, b2b)
		devtools(t, "GET", browser.Endpoint+"/json/close/"+tab["id"].(string))
		stop()
		<-served
	}
}

// devtools calls one of the browser's /json HTTP endpoints.
func devtools(t *testing.T, method, u string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, u, res.StatusCode, b)
	}
	_ = json.Unmarshal(b, &v)
	return v
}
