package commands

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestPageDataCLI runs console, network, back/forward/reload, cookies,
// storage, pdf and drag as a user would: the real binary, a real headless
// Chromium, the fixture pages of testdata/ served on 127.0.0.1. Each check
// reads the page's own record of what happened.
func TestPageDataCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	// A loopback port that listened and is closed again: a request there fails.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + dead.Addr().String() + "/refused.js"
	dead.Close()
	srv := httptest.NewServer(browsertest.PagedataHandler(filepath.Join("..", "testdata"), closed))
	defer srv.Close()
	defer stopBrowser(t, e)
	// evalJSON decodes the page's answer to expr.
	evalJSON := func(t *testing.T, expr string, out any) {
		t.Helper()
		r := e.Run(t, "eval", expr)
		r.Exit(t, 0)
		r.Decode(t, out)
	}

	t.Run("console CI gate", func(t *testing.T) {
		// The one-liner of the README, through a shell: exit 1 on a page that
		// logs errors, 0 on a clean one.
		gate := func(url string) (int, string) {
			cmd := exec.Command("sh", "-c", `"$DTB" open "$1" >/dev/null && "$DTB" console --fail-on error`, "gate", url)
			cmd.Env = append(e.Environ(), "DTB="+e.Bin)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode(), stderr.String()
			}
			if err != nil {
				t.Fatal(err)
			}
			return 0, stderr.String()
		}
		code, stderr := gate(srv.URL + "/pagedata/console.html")
		if code != 1 || !strings.Contains(stderr, `"reason":"console-errors"`) {
			t.Fatalf("gate on the logging page: exit %d, %s", code, stderr)
		}
		if code, stderr := gate(srv.URL + "/pages/index.html"); code != 0 {
			t.Fatalf("gate on a clean page: exit %d, %s", code, stderr)
		}
	})

	t.Run("console", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/pagedata/console.html").Exit(t, 0)
		// The page's own account of what it logged before dtb attached.
		var record []struct{ Level, Text string }
		evalJSON(t, "window.record", &record)
		type message struct{ Level, Source, Text, URL, Stack string }
		var doc struct {
			Count    int
			Counts   map[string]int
			Messages []message
		}
		r := e.Run(t, "console")
		r.Exit(t, 0)
		r.Decode(t, &doc)
		var texts []string
		for _, m := range doc.Messages {
			texts = append(texts, m.Level+" "+m.Text)
		}
		for _, want := range record {
			if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, want.Level+" ") && strings.Contains(s, want.Text) }) {
				t.Errorf("the page logged %s %q; dtb console lists:\n%s", want.Level, want.Text, strings.Join(texts, "\n"))
			}
		}
		for _, m := range doc.Messages {
			if m.Source == "exception" && (m.Stack == "" || !strings.HasSuffix(m.URL, "/console.html")) {
				t.Errorf("exception without its stack or url: %+v", m)
			}
		}
		// --level keeps that level and above; counts count everything.
		r = e.Run(t, "console", "--level", "warning")
		r.Exit(t, 0)
		var warn struct {
			Count    int
			Counts   map[string]int
			Messages []message
		}
		r.Decode(t, &warn)
		if warn.Count != warn.Counts["warning"]+warn.Counts["error"] || warn.Counts["debug"] != doc.Counts["debug"] {
			t.Errorf("--level warning: count %d, counts %v", warn.Count, warn.Counts)
		}
		// Logged after the first read, on the page's own time: a new
		// connection sees it too; --since keeps only recent messages.
		e.Run(t, "eval", "later('after'), 1").Exit(t, 0)
		r = e.Run(t, "console", "--since", "1h", "--level", "error", "--jq", "[.messages[].text]")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, "error later after") {
			t.Errorf("a message logged after the first read is missing: %s", r.Stdout)
		}
		r = e.Run(t, "console", "--since", "1ms", "--jq", ".count")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "0" {
			t.Errorf("--since 1ms lists %s messages", r.Stdout)
		}
		// The gate's error counts what --level lists at its level, and nothing is on stdout.
		r = e.Run(t, "console", "--level", "warning", "--jq", ".count")
		r.Exit(t, 0)
		gate := e.Run(t, "console", "--fail-on", "warn").Fails(t, 1, "console-errors")
		if n, _ := gate["count"].(float64); strings.TrimSpace(r.Stdout) != strconv.Itoa(int(n)) {
			t.Errorf("console-errors count %v; --level warning lists %s", gate["count"], r.Stdout)
		}
		// --clear empties the buffers: the next read lists only newer messages.
		e.Run(t, "console", "--clear").Exit(t, 0)
		r = e.Run(t, "console", "--jq", ".count")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "0" {
			t.Errorf("after --clear, console lists %s messages", r.Stdout)
		}
	})

	t.Run("network", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/pagedata/network.html").Exit(t, 0)
		// The page's own account of its fetches, once they have all settled.
		var record []struct {
			Method, URL, Error string
			Status             int
		}
		evalJSON(t, "window.loaded", &record)
		type request struct {
			URL, Failure, Source string
			Method               *string
			Status               *int
			Failed               bool
		}
		var doc struct {
			Count, Failed int
			Requests      []request
		}
		r := e.Run(t, "network", "--failed")
		r.Exit(t, 0)
		r.Decode(t, &doc)
		find := func(url string, status int) *request {
			for i, q := range doc.Requests {
				if q.URL == url && ((status == 0 && q.Status == nil) || (q.Status != nil && *q.Status == status)) {
					return &doc.Requests[i]
				}
			}
			return nil
		}
		for _, rec := range record {
			failed := rec.Error != "" || rec.Status >= 400
			got := find(rec.URL, rec.Status)
			switch {
			case failed && got == nil:
				t.Errorf("the page's %s %s (status %d, error %q) is not among the failed requests: %+v", rec.Method, rec.URL, rec.Status, rec.Error, doc.Requests)
			case !failed && got != nil:
				t.Errorf("the page's %s %s succeeded but is listed as failed", rec.Method, rec.URL)
			case got != nil && (!got.Failed || got.Failure == ""):
				t.Errorf("failed request without failure text: %+v", got)
			}
		}
		if doc.Count != doc.Failed || doc.Count < 4 {
			t.Errorf("--failed: count %d, failed %d", doc.Count, doc.Failed)
		}
		// The unfiltered list has the successes too, with their status.
		var everything struct{ Requests []request }
		e.Run(t, "network").Decode(t, &everything)
		ok := 0
		for _, q := range everything.Requests {
			if strings.HasSuffix(q.URL, "/style.css") && q.Status != nil && *q.Status == 200 && !q.Failed {
				ok++
			}
		}
		if ok != 1 {
			t.Errorf("style.css is not listed once with status 200: %+v", everything.Requests)
		}
		fail := e.Run(t, "network", "--fail-on-failed").Fails(t, 1, "network-failures")
		if n, _ := fail["count"].(float64); int(n) != doc.Failed {
			t.Errorf("network-failures count %v, want %d", fail["count"], doc.Failed)
		}
		e.Run(t, "network", "--filter", "ok.json", "--fail-on-failed").Exit(t, 0)
		r = e.Run(t, "network", "--filter", `/__status__/5\d\d/`, "--jq", "[.requests[].status]", "--compact")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "[500]" {
			t.Errorf("--filter /5xx/: %s", r.Stdout)
		}
		// Recorded live across a reload: methods are known.
		r = e.Run(t, "network", "--reload", "--filter", "/__status__/500", "--jq", "[.requests[] | .method + \" \" + .source]", "--compact")
		if r.Exit(t, 0); !strings.Contains(r.Stdout, `"POST live"`) {
			t.Errorf("--reload: %s", r.Stdout)
		}
	})

	t.Run("history", func(t *testing.T) {
		a, b := srv.URL+"/pages/history.html?a", srv.URL+"/pages/history.html?b"
		e.Run(t, "open", a).Exit(t, 0)
		e.Run(t, "open", "--current", b).Exit(t, 0)
		var back struct{ URL, From, Title string }
		e.Run(t, "back").Decode(t, &back)
		if back.URL != a || back.From != b || back.Title != "dtb fixture: history" {
			t.Errorf("back: %+v", back)
		}
		r := e.Run(t, "forward", "--jq", ".url", "-r")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != b {
			t.Errorf("forward: %s", r.Stdout)
		}
		e.Run(t, "forward").Fails(t, 3, "no-history-entry")
		r = e.Run(t, "reload", "--hard", "--jq", ".status")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "200" {
			t.Errorf("reload: %s", r.Stdout)
		}
		// As after open, the reloaded document is tracked from its first node.
		var tracked bool
		evalJSON(t, "!!window[Symbol.for('dtb.quiet')]", &tracked)
		if !tracked {
			t.Errorf("the reloaded document has no DOM tracker")
		}
		var loads []string
		evalJSON(t, "JSON.parse(sessionStorage.getItem('loads'))", &loads)
		got := strings.Join(loads, " ")
		// Back and forward reload the document or restore it from the
		// back/forward cache; the page tells both apart.
		if !strings.HasSuffix(got, "/pages/history.html?b:reload") || strings.Count(got, "back_forward")+strings.Count(got, "bfcache") != 2 {
			t.Errorf("the page's log: %s", got)
		}
	})

	t.Run("navigates only its own tabs", func(t *testing.T) {
		r := e.Run(t, "status", "-r", "--jq", ".browser.endpoint")
		r.Exit(t, 0)
		endpoint := strings.TrimSpace(r.Stdout)
		resp, err := http.DefaultClient.Do(mustReq(t, http.MethodPut, endpoint+"/json/new?"+srv.URL+"/pages/index.html"))
		if err != nil {
			t.Fatal(err)
		}
		var foreign struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&foreign)
		resp.Body.Close()
		defer func() {
			if resp, err := http.Get(endpoint + "/json/close/" + foreign.ID); err == nil {
				resp.Body.Close()
			}
		}()
		for _, args := range [][]string{{"back"}, {"forward"}, {"reload"}, {"network", "--reload"}} {
			e.Run(t, append(args, "--tab", foreign.ID)...).Fails(t, 6, "not-owned")
		}
		// Reading it is not navigating it.
		e.Run(t, "console", "--tab", foreign.ID).Exit(t, 0)
		e.Run(t, "network", "--tab", foreign.ID).Exit(t, 0)
	})

	t.Run("cookies", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/pages/index.html").Exit(t, 0)
		e.Run(t, "cookies", "set", "theme", "dark", "--expires", "1h", "--same-site", "Lax").Exit(t, 0)
		r := e.RunWith(t, nil, "s3cret-value\n", "cookies", "set", "sid", "--stdin", "--http-only")
		r.Exit(t, 0)
		var cookie string
		evalJSON(t, "document.cookie", &cookie)
		// The page sees theme; sid is httpOnly: only the browser has it.
		if cookie != "theme=dark" {
			t.Errorf("the page's document.cookie is %q", cookie)
		}
		var got struct {
			Count   int
			Cookies []struct {
				Name, Value string
				HTTPOnly    bool
				Expires     *string
			}
		}
		e.Run(t, "cookies", "get", "sid").Decode(t, &got)
		if got.Count != 1 || got.Cookies[0].Value != "s3cret-value" || !got.Cookies[0].HTTPOnly || got.Cookies[0].Expires != nil {
			t.Errorf("cookies get sid: %+v", got)
		}
		// A refused cookie is named; its value never reaches stderr.
		bad := e.Run(t, "cookies", "set", "sid", "s3cret;value")
		bad.Fails(t, 1, "cookie-rejected")
		if strings.Contains(bad.Stderr, "s3cret") {
			t.Errorf("the value is on stderr: %s", bad.Stderr)
		}
		e.Run(t, "cookies", "get", "nope").Fails(t, 3, "no-such-cookie")
		r = e.Run(t, "cookies", "clear", "--jq", ".cleared")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "2" {
			t.Errorf("clear: %s", r.Stdout)
		}
		evalJSON(t, "document.cookie", &cookie)
		r = e.Run(t, "cookies", "--jq", ".count")
		if r.Exit(t, 0); cookie != "" || strings.TrimSpace(r.Stdout) != "0" {
			t.Errorf("after clear: document.cookie %q, cookies %s", cookie, r.Stdout)
		}
	})

	t.Run("storage", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/pages/index.html").Exit(t, 0)
		e.Run(t, "storage", "local", "set", "token", "abc 123").Exit(t, 0)
		e.RunWith(t, nil, "from stdin\n", "storage", "session", "set", "note", "--stdin").Exit(t, 0)
		var inPage []string
		evalJSON(t, "[localStorage.getItem('token'), sessionStorage.getItem('note')]", &inPage)
		if len(inPage) != 2 || inPage[0] != "abc 123" || inPage[1] != "from stdin" {
			t.Errorf("the page's storage holds %q", inPage)
		}
		e.Run(t, "eval", "localStorage.setItem('page', 'set by the page'), 1").Exit(t, 0)
		r := e.Run(t, "storage", "local", "get", "page", "-r", "--jq", ".value")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "set by the page" {
			t.Errorf("get: %s", r.Stdout)
		}
		var list struct {
			Count int
			Items map[string]string
		}
		e.Run(t, "storage", "local").Decode(t, &list)
		if list.Count != 2 || list.Items["token"] != "abc 123" {
			t.Errorf("list: %+v", list)
		}
		e.Run(t, "storage", "local", "remove", "token").Exit(t, 0)
		e.Run(t, "storage", "local", "get", "token").Fails(t, 3, "no-such-key")
		e.Run(t, "storage", "session", "clear").Exit(t, 0)
		var n int
		evalJSON(t, "sessionStorage.length + localStorage.length", &n)
		if n != 1 {
			t.Errorf("after remove and clear the page holds %d items", n)
		}
		// An opaque origin may not use storage.
		e.Run(t, "open", "data:text/html,<p>opaque</p>").Exit(t, 0)
		e.Run(t, "storage", "local").Fails(t, 1, "storage-unavailable")
	})

	t.Run("pdf", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/pages/tall.html").Exit(t, 0)
		out := filepath.Join(t.TempDir(), "page.pdf")
		var doc struct {
			Path         string
			Pages, Bytes int
			WidthInches  float64
			Landscape    bool
			Paper        string
			HeightInches float64
			Background   bool
		}
		e.Run(t, "pdf", "--out", out, "--paper", "a4", "--landscape", "--background").Decode(t, &doc)
		st, err := os.Stat(out)
		if err != nil || st.Mode().Perm() != 0o600 || doc.Path != out || int(st.Size()) != doc.Bytes {
			t.Fatalf("pdf file %s: %v %v, result %+v", out, st, err, doc)
		}
		b, _ := os.ReadFile(out)
		if !strings.HasPrefix(string(b), "%PDF-") || doc.Pages < 2 || doc.WidthInches != 11.69 || !doc.Landscape || doc.Paper != "a4" || !doc.Background {
			t.Errorf("pdf: %+v", doc)
		}
		// Without --out: a new 0600 file in the cache directory.
		r := e.Run(t, "pdf", "-r", "--jq", ".path")
		r.Exit(t, 0)
		path := strings.TrimSpace(r.Stdout)
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 || !strings.HasSuffix(path, ".pdf") {
			t.Errorf("pdf in the cache: %s %v %v", path, st, err)
		}
		e.Run(t, "pdf", "--paper", "napkin").Fails(t, 2, "usage")
	})

	t.Run("drag", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/interact/drag.html").Exit(t, 0)
		events := func() string {
			var ev []string
			evalJSON(t, "window.events", &ev)
			return strings.Join(ev, "|")
		}
		// HTML5 drag and drop: the source by a CSS selector, the target by --to-label.
		r := e.Run(t, "drag", "#card1", "--to-label", "Bin", "--jq", ".mode", "-r")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "html5" {
			t.Errorf("mode %s", r.Stdout)
		}
		var parent string
		evalJSON(t, "document.getElementById('card1').parentElement.id", &parent)
		if ev := events(); !strings.Contains(ev, "drop card1 on bin") || parent != "bin" {
			t.Errorf("the page saw %s; card1 is in %s", ev, parent)
		}
		// A zone that does not accept drops: not-dropped, and the page saw no drop.
		e.Run(t, "drag", "--text", "Card 2", "#refuse").Fails(t, 1, "not-dropped")
		if ev := events(); strings.Contains(ev, "drop on refuse") || !strings.Contains(ev, "dragstart card2") {
			t.Errorf("the page saw %s", ev)
		}
		// Mouse-based: both ends by positional selectors.
		r = e.Run(t, "drag", "#handle", "#slot", "--steps", "4", "--jq", ".mode", "-r")
		if r.Exit(t, 0); strings.TrimSpace(r.Stdout) != "mouse" {
			t.Errorf("mode %s", r.Stdout)
		}
		if ev := events(); !strings.HasSuffix(ev, "mouseup handle over slot after 5 moves|slotted handle") {
			t.Errorf("the page saw %s", ev)
		}
		e.Run(t, "drag", "#nothing", "#slot", "--timeout", "2s").Fails(t, 3, "no-match")
	})
}
