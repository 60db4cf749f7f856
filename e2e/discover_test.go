package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/relay"
	"github.com/dtb-cli/dtb/internal/relayclient"
)

// portsEnv replaces the ports dtb looks for a relay on (commands/flags_toolbar.go),
// so that the test owns every port it lists.
const portsEnv = "DTB_TEST_RELAY_PORTS"

func portOfURL(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// deadPort is a loopback port nothing listens on (it was free a moment ago).
func deadPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return p
}

// TestRelayDiscovery: with neither --relay nor DTB_RELAY, and nothing at the
// default, dtb finds the relay on another usual port and says which on stderr;
// two relays are ambiguous, none is relay-unreachable naming the ports tried.
func TestRelayDiscovery(t *testing.T) {
	needBrowser(t)
	// The default must not answer, or there is nothing to discover.
	defaultHost := strings.TrimPrefix(relayclient.DefaultBase, "http://")
	if c, err := net.DialTimeout("tcp", defaultHost, time.Second); err == nil {
		c.Close()
		t.Skipf("something listens on %s, the default relay port; discovery starts only when the default does not answer", defaultHost)
	}
	relay := startRelay(t)
	rid := reporterID("disc")
	tab := openTab(t, relay.page("reporterId="+rid))
	waitConnected(t, relay.URL, rid)
	up := startUpstream(t, 3000, false)
	// Dev servers without the relay: an SPA fallback (200 text/html for every
	// path) and a JSON 404. Neither is a relay.
	spa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>app</title>")
	}))
	defer spa.Close()
	json404 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	}))
	defer json404.Close()
	dead := deadPort(t)
	others := []string{dead, portOfURL(t, spa.URL), portOfURL(t, json404.URL)}

	exec := func(ports []string, args ...string) browsertest.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// --via relay: the session's browser would otherwise make it CDP.
		return cli.Exec(ctx, []string{portsEnv + "=" + strings.Join(ports, ",")}, "", append(args, "--via", "relay")...)
	}

	t.Run("one relay", func(t *testing.T) {
		p := portOfURL(t, relay.URL)
		r := exec(append(others, p), "state", "--reporter", rid)
		doc := r.OK(t)
		if get(doc, "connection", "reporterId") != rid {
			t.Errorf("state of %v", get(doc, "connection", "reporterId"))
		}
		if w := r.CommandWarnings(); !reflect.DeepEqual(w, []string{"relay-found"}) {
			t.Errorf("warnings %v; stderr %s", w, r.Stderr)
		}
		want := "http://localhost:" + p
		if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, relayclient.DefaultBase) {
			t.Errorf("stderr does not name the default and the relay found (%s): %s", want, r.Stderr)
		}
		// A run goes to the relay found, and reaches the page.
		doc = exec(append(others, p), "run", "flags.set", "key=search.rank", "value=11", "--reporter", rid).OK(t)
		if doc["ranIn"] != rid {
			t.Errorf("run: %v", doc)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab).Stdout, "search.rank"); v != 11.0 {
			t.Errorf("search.rank %v after a run through the relay found, want 11", v)
		}
		// --reporter means the relay even with a browser session up (no --via).
		ctx0, cancel0 := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel0()
		r = cli.Exec(ctx0, []string{portsEnv + "=" + p}, "", "state", "--reporter", rid, "--jq", ".connection.reporterId")
		r.OK(t)
		if strings.TrimSpace(r.Stdout) != `"`+rid+`"` {
			t.Errorf("--reporter without --via: %s", r)
		}
		// DTB_RELAY is a choice: no looking elsewhere.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r = cli.Exec(ctx, []string{portsEnv + "=" + p, "DTB_RELAY=http://127.0.0.1:" + dead}, "", "state", "--via", "relay")
		r.Fails(t, 5, "relay-unreachable")
	})

	t.Run("two relays", func(t *testing.T) {
		ports := append(others, portOfURL(t, relay.URL), portOfURL(t, up.URL))
		e := exec(ports, "state").Fails(t, 7, "ambiguous-relay")
		relays := fmt.Sprint(e["relays"])
		for _, u := range []string{"http://localhost:" + portOfURL(t, relay.URL), "http://localhost:" + portOfURL(t, up.URL)} {
			if !strings.Contains(relays, u) || !strings.Contains(fmt.Sprint(e["error"]), u) {
				t.Errorf("%s not listed: %v", u, e)
			}
		}
		if rs, _ := e["relays"].([]any); len(rs) != 2 {
			t.Errorf("relays %v, want 2", e["relays"])
		}
		exec(ports, "run", "flags.set", "key=search.rank", "value=12").Fails(t, 7, "ambiguous-relay")
	})

	t.Run("none", func(t *testing.T) {
		r := exec(others, "state")
		e := r.Fails(t, 5, "relay-unreachable")
		msg := fmt.Sprint(e["error"])
		tried := fmt.Sprint(e["triedPorts"])
		for _, p := range append([]string{portOfURL(t, relayclient.DefaultBase)}, others...) {
			if !strings.Contains(tried, p) {
				t.Errorf("triedPorts %v lacks %s", e["triedPorts"], p)
			}
		}
		for _, p := range others {
			if !strings.Contains(msg, p) {
				t.Errorf("message does not name port %s: %s", p, msg)
			}
		}
		if r.Elapsed > 10*time.Second {
			t.Errorf("looking took %s", r.Elapsed)
		}
	})

	t.Run("a relay that starts while dtb waits", func(t *testing.T) {
		p := deadPort(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		waiting := make(chan browsertest.Result, 1)
		go func() {
			waiting <- cli.Exec(ctx, []string{portsEnv + "=" + p}, "", "state", "--via", "relay", "--until", ".connection.connected", "--timeout", "30s")
		}()
		time.Sleep(500 * time.Millisecond) // it polls with nothing there
		late := startRelay(t, "--listen", "127.0.0.1:"+p)
		openTab(t, late.page(""))
		r := <-waiting
		doc := r.OK(t)
		if get(doc, "connection", "connected") != true || !reflect.DeepEqual(r.CommandWarnings(), []string{"relay-found"}) {
			t.Errorf("%s", r)
		}
	})

	t.Run("the real port list", func(t *testing.T) {
		// 5174 (Vite's second port) is on the built-in list. Other relays on the
		// machine's usual ports may answer too: then it is one of several.
		l, err := net.Listen("tcp", "127.0.0.1:5174")
		if err != nil {
			t.Skip("127.0.0.1:5174 is taken on this machine")
		}
		l.Close()
		startRelay(t, "--listen", "127.0.0.1:5174")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r := cli.Exec(ctx, nil, "", "state", "--via", "relay")
		const want = "http://localhost:5174"
		switch r.Code {
		case 5: // found, and no page on it
			r.Fails(t, 5, "no-page-connected")
			if !reflect.DeepEqual(r.CommandWarnings(), []string{"relay-found"}) || !strings.Contains(r.Stderr, want) {
				t.Errorf("%s", r)
			}
		case 7:
			if e := r.Fails(t, 7, "ambiguous-relay"); !strings.Contains(fmt.Sprint(e["relays"]), want) {
				t.Errorf("%s", r)
			}
		default:
			t.Errorf("want the relay on 5174 found: %s", r)
		}
	})

	t.Run("--relay with the route prefix", func(t *testing.T) {
		for _, suffix := range []string{"/__dev-toolbar", "/__dev-toolbar/", "/__dev-toolbar/state"} {
			r := dtb(t, "state", "--relay", relay.URL+suffix, "--reporter", rid, "--jq", ".connection.connected")
			r.OK(t)
			if strings.TrimSpace(r.Stdout) != "true" {
				t.Errorf("%s: %s", suffix, r)
			}
			// The one-slot relay has no page: its own no-page answer, not an
			// unknown route under a doubled prefix.
			e := dtb(t, "state", "--relay", up.URL+suffix).Fails(t, 5, "no-page-connected")
			if e["status"] != 503.0 {
				t.Errorf("%s on the one-slot relay: %v", suffix, e)
			}
		}
		doc := dtb(t, "run", "flags.set", "key=search.rank", "value=13", "--relay", relay.URL+"/__dev-toolbar", "--reporter", rid).OK(t)
		if doc["ranIn"] != rid {
			t.Errorf("run: %v", doc)
		}
		if v := flagEffective(t, dtb(t, "state", "--via", "cdp", "--tab", tab).Stdout, "search.rank"); v != 13.0 {
			t.Errorf("search.rank %v, want 13", v)
		}
	})
}

// Issue 11.2: dtb relay's default port is no dev server's, and is where dtb
// looks first; a --listen address that is taken fails port-in-use (exit 6),
// suggesting a free port, instead of a bare listen error.
func TestRelayDefaultPortAndPortInUse(t *testing.T) {
	port := portOfURL(t, relayclient.DefaultBase)
	if port != relay.DefaultPort || relay.DefaultListen != "localhost:"+port {
		t.Errorf("dtb relay listens on %s by default, dtb looks at %s first", relay.DefaultListen, relayclient.DefaultBase)
	}
	for _, p := range append([]int{5273}, relayclient.CommonPorts...) {
		if fmt.Sprint(p) == port {
			t.Errorf("the default port %s is a common dev-server port", port)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := cli.Exec(ctx, nil, "", "relay", "--listen", l.Addr().String())
	e := r.Fails(t, 6, "port-in-use")
	if msg := fmt.Sprint(e["error"]); !strings.Contains(msg, l.Addr().String()) || !strings.Contains(msg, "--listen 127.0.0.1:0") {
		t.Errorf("message: %s", msg)
	}
}
