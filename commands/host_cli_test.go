package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/hostwire"
)

const hostPage = `<!doctype html><title>host</title>
<button id=del onclick="window.answer = confirm('Delete?')">Delete</button>`

// hostCLI is a CLI with its own fixture server and cleanup: browser stop,
// then every host and the browser ended by PID.
func hostCLI(t *testing.T) (*browsertest.CLI, string) {
	t.Helper()
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(hostPage))
	}))
	t.Cleanup(srv.Close)
	stopBrowserAtEnd(t, e)
	return e, srv.URL
}

// hostProcs are the host processes of the CLI's state directory, found in
// /proc by their command line and environment (not by their info file).
func hostProcs(t *testing.T, e *browsertest.CLI) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(hostwire.HostCommand)) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(d, "environ"))
		if !bytes.Contains(env, []byte("DTB_STATE_DIR="+e.State+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		if browsertest.Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func oneHost(t *testing.T, e *browsertest.CLI) int {
	t.Helper()
	pids := hostProcs(t, e)
	if len(pids) != 1 {
		t.Fatalf("want one host process, have %v", pids)
	}
	return pids[0]
}

func noWarnings(t *testing.T, r browsertest.Result) {
	t.Helper()
	if w := r.Warnings(); len(w) > 0 {
		t.Fatalf("warnings %v: %s", w, r)
	}
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for browsertest.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %v", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHostDialogAcrossCommands: a click leaves a confirm() open, a later
// process answers it, the page sees true. Without the host (DTB_HOST=off)
// the shell dismisses it when the click's process detaches.
func TestHostDialogAcrossCommands(t *testing.T) {
	e, url := hostCLI(t)
	e.Run(t, "open", url).Exit(t, 0)
	var doc dialogDoc
	r := e.Run(t, "click", "--text", "Delete")
	r.Exit(t, 0)
	r.Decode(t, &doc)
	if doc.Dialog == nil || !doc.Dialog.Open || doc.Dialog.Type != "confirm" {
		t.Fatalf("click: %s", r)
	}
	r = e.Run(t, "dialog")
	if !strings.Contains(r.Stdout, `"open":true`) {
		t.Fatalf("dialog: %s", r)
	}
	r = e.Run(t, "dialog", "accept")
	r.Exit(t, 0)
	if !strings.Contains(r.Stdout, `"answered":"accept"`) {
		t.Fatalf("dialog accept: %s", r)
	}
	if got := strings.TrimSpace(e.Run(t, "eval", "window.answer").Stdout); got != "true" {
		t.Fatalf("the page saw %s", got)
	}

	off := []string{"DTB_HOST=off"}
	r = e.RunWith(t, off, "", "click", "--text", "Delete")
	r.Decode(t, &doc)
	if doc.Dialog == nil || doc.Dialog.Open || doc.Dialog.By != "browser" {
		t.Fatalf("click without the host: %s", r)
	}
}

// TestHostDialogBetweenCommands: a dialog the page opens after a command has
// ended (a timer's confirm) is known to the host, which watches every tab it
// used: dtb dialog shows it, the next page command fails dialog-open at once
// instead of waiting out its --timeout on the blocked page, and dtb dialog
// accept answers it (the page sees true).
func TestHostDialogBetweenCommands(t *testing.T) {
	e, url := hostCLI(t)
	e.Run(t, "open", url).Exit(t, 0)
	e.Run(t, "eval", "setTimeout(() => { window.later = confirm('Later?') }, 50); 1").Exit(t, 0)
	var status struct {
		Open   bool
		Dialog *struct{ Type, Message string }
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		r := e.Run(t, "dialog")
		r.Exit(t, 0)
		r.Decode(t, &status)
		if status.Open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dtb dialog never showed the confirm the page opened after the command: %s", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status.Dialog == nil || status.Dialog.Type != "confirm" || status.Dialog.Message != "Later?" {
		t.Fatalf("dtb dialog: %+v", status)
	}
	start := time.Now()
	doc := e.Run(t, "eval", "2+2", "--timeout", "20s").Fails(t, 6, "dialog-open")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("eval on the blocked tab took %v: it waited instead of reporting the dialog", took)
	}
	if d, _ := doc["dialog"].(map[string]any); d == nil || d["message"] != "Later?" {
		t.Fatalf("the error names no dialog: %v", doc)
	}
	r := e.Run(t, "dialog", "accept")
	r.Exit(t, 0)
	if !strings.Contains(r.Stdout, `"answered":"accept"`) || !strings.Contains(r.Stdout, "Later?") {
		t.Fatalf("dialog accept: %s", r)
	}
	if got := strings.TrimSpace(e.Run(t, "eval", "window.later").Stdout); got != "true" {
		t.Fatalf("the page saw %s", got)
	}
	// Answered, the record is gone: the next command runs as usual.
	r = e.Run(t, "dialog")
	r.Decode(t, &status)
	if status.Open || status.Dialog != nil {
		t.Fatalf("dtb dialog after the answer: %s", r)
	}

	// An answer armed before is spent on a dialog that opens between
	// commands, as on one that opens during a command.
	e.Run(t, "dialog", "dismiss").Exit(t, 0)
	e.Run(t, "eval", "setTimeout(() => { window.again = confirm('Again?') }, 50); 1").Exit(t, 0)
	for deadline := time.Now().Add(5 * time.Second); ; {
		r := e.Run(t, "eval", "window.again", "--timeout", "10s")
		r.Exit(t, 0)
		if got := strings.TrimSpace(r.Stdout); got == "false" {
			break
		} else if got != "null" || time.Now().After(deadline) {
			t.Fatalf("the page saw %s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var armed struct {
		Open  bool
		Armed any
	}
	r = e.Run(t, "dialog")
	r.Decode(t, &armed)
	if armed.Open || armed.Armed != nil {
		t.Fatalf("the armed answer was not spent: %s", r)
	}
}

// TestBusyTab: an eval still running at --timeout is stopped and the tab
// answers again; a page script that keeps the tab busy after a command
// (a click handler that runs for seconds) is remembered, so the next command
// reports page-unresponsive at once instead of waiting out its own --timeout,
// while dtb wait waits for it and a navigation to another site leaves it.
// With and without the session host.
func TestBusyTab(t *testing.T) {
	for _, mode := range []string{"host", "direct"} {
		t.Run(mode, func(t *testing.T) {
			e, url := hostCLI(t)
			if mode == "direct" {
				e.Env = append(e.Env, "DTB_HOST=off")
			}
			e.Run(t, "open", url).Exit(t, 0)
			doc := e.Run(t, "eval", "while (true) {}", "--timeout", "1s").Fails(t, 4, "timeout")
			if doc["terminated"] != true {
				t.Fatalf("the endless eval was not stopped: %v", doc)
			}
			if got := strings.TrimSpace(e.Run(t, "eval", "1+1", "--timeout", "5s").Stdout); got != "2" {
				t.Fatalf("the tab after the stopped eval: %q", got)
			}
			e.Run(t, "eval", "document.querySelector('#del').onclick = () => { const end = Date.now() + 6000; while (Date.now() < end) {} }; 1").Exit(t, 0)
			e.Run(t, "click", "#del", "--timeout", "1s").Fails(t, 4, "page-unresponsive")
			start := time.Now()
			e.Run(t, "eval", "1", "--timeout", "20s").Fails(t, 4, "page-unresponsive")
			if took := time.Since(start); took > 4*time.Second {
				t.Fatalf("the command after the tab went busy took %v", took)
			}
			e.Run(t, "wait", "--load", "--timeout", "20s").Exit(t, 0)
			if got := strings.TrimSpace(e.Run(t, "eval", "1+2").Stdout); got != "3" {
				t.Fatalf("the tab after its script ended: %q", got)
			}
			if mode == "direct" {
				// A fresh connection's Page.enable waits on the busy renderer:
				// only the host's kept one navigates at once.
				return
			}
			// An endless one: a navigation to another site leaves it (the
			// new document gets a renderer of its own), and is not refused.
			e.Run(t, "eval", "document.querySelector('#del').onclick = () => { for (;;) {} }; 1").Exit(t, 0)
			e.Run(t, "click", "#del", "--timeout", "1s").Fails(t, 4, "page-unresponsive")
			other := strings.Replace(url, "127.0.0.1", "localhost", 1)
			e.Run(t, "open", "--current", other, "--timeout", "10s").Exit(t, 0)
			if got := strings.TrimSpace(e.Run(t, "eval", "location.hostname", "-r").Stdout); got != "localhost" {
				t.Fatalf("after the navigation away from the busy page: %q", got)
			}
		})
	}
}

// TestHostFaults: every way a host can be missing, dead, hung, replaced or
// outlive its browser; the commands never fail for it, nothing is left over.
func TestHostFaults(t *testing.T) {
	e, url := hostCLI(t)
	e.Run(t, "open", url).Exit(t, 0)
	browser := browserPID(e)
	host := oneHost(t, e)
	if st := e.Run(t, "status", "--jq", ".host.pid"); strings.TrimSpace(st.Stdout) != strconv.Itoa(host) {
		t.Fatalf("status shows host %s, want %d", st.Stdout, host)
	}

	t.Run("killed mid-command", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done := make(chan browsertest.Result, 1)
		go func() {
			done <- e.Exec(ctx, nil, "", "eval", "new Promise(r => setTimeout(() => r(1), 5000))")
		}()
		time.Sleep(700 * time.Millisecond)
		syscall.Kill(host, syscall.SIGKILL)
		r := <-done
		doc := r.Fails(t, 5, "host-gone")
		if doc["mayHaveRun"] != true {
			t.Fatalf("host-gone without mayHaveRun: %s", r)
		}
		waitGone(t, host, 2*time.Second)
		r = e.Run(t, "eval", "location.href")
		r.Exit(t, 0)
		noWarnings(t, r)
		if !strings.Contains(r.Stdout, url) || browserPID(e) != browser {
			t.Fatalf("after the host died: %s, browser %d want %d", r, browserPID(e), browser)
		}
		host = oneHost(t, e)
	})

	t.Run("stale socket", func(t *testing.T) {
		syscall.Kill(host, syscall.SIGKILL)
		waitGone(t, host, 2*time.Second)
		if _, err := os.Stat(filepath.Join(e.State, "sessions", "default.host.sock")); err != nil {
			t.Fatalf("the killed host left no socket file to test with: %v", err)
		}
		r := e.Run(t, "eval", "1+1")
		r.Exit(t, 0)
		noWarnings(t, r)
		host = oneHost(t, e)
	})

	t.Run("hung host", func(t *testing.T) {
		syscall.Kill(host, syscall.SIGSTOP)
		start := time.Now()
		r := e.Run(t, "eval", "2+2")
		syscall.Kill(host, syscall.SIGCONT)
		r.Exit(t, 0)
		if w := r.Warnings(); len(w) != 1 || w[0] != "host-unavailable" {
			t.Fatalf("a hung host: %s", r)
		}
		t.Logf("fell back in %v", time.Since(start))
	})

	t.Run("toolbar command", func(t *testing.T) {
		// A toolbar command goes through a running host (a hung one shows
		// it: the command falls back with a warning) and never starts one.
		state := []string{"state", "--relay", "http://127.0.0.1:1", "--timeout", "2s"}
		r := e.Run(t, state...)
		r.Fails(t, 5, "relay-unreachable")
		noWarnings(t, r)
		syscall.Kill(host, syscall.SIGSTOP)
		r = e.Run(t, state...)
		syscall.Kill(host, syscall.SIGCONT)
		r.Fails(t, 5, "relay-unreachable")
		if w := r.Warnings(); len(w) != 1 || w[0] != "host-unavailable" {
			t.Fatalf("a toolbar command did not try the running host: %s", r)
		}
		syscall.Kill(host, syscall.SIGKILL)
		waitGone(t, host, 2*time.Second)
		r = e.Run(t, state...)
		r.Fails(t, 5, "relay-unreachable")
		noWarnings(t, r)
		if pids := hostProcs(t, e); len(pids) != 0 {
			t.Fatalf("a toolbar command started host %v", pids)
		}
		e.Run(t, "eval", "1").Exit(t, 0)
		host = oneHost(t, e)
	})

	t.Run("older build", func(t *testing.T) {
		// A copy of the front and the engine: another build by its file.
		dir := t.TempDir()
		for _, name := range []string{"dtb", "dtb-engine"} {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(e.Bin), name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		other := filepath.Join(dir, "dtb")
		old := *e
		old.Bin = other
		old.Run(t, "eval", "1").Exit(t, 0)
		oldHost := oneHost(t, e)
		if oldHost == host {
			t.Fatalf("the other build used host %d of this one", host)
		}
		r := e.Run(t, "eval", "1")
		r.Exit(t, 0)
		noWarnings(t, r)
		waitGone(t, oldHost, 2*time.Second)
		host = oneHost(t, e)
	})

	t.Run("racing", func(t *testing.T) {
		syscall.Kill(host, syscall.SIGKILL)
		waitGone(t, host, 2*time.Second)
		var wg sync.WaitGroup
		results := make([]browsertest.Result, 4)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.Run(t, "eval", "1+1")
			}()
		}
		wg.Wait()
		for _, r := range results {
			r.Exit(t, 0)
			noWarnings(t, r)
		}
		host = oneHost(t, e)
	})

	t.Run("interrupted", func(t *testing.T) {
		cmd := exec.Command(e.Bin, "eval", "new Promise(r => setTimeout(() => r(1), 10000))")
		cmd.Env = e.Environ()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted") {
			t.Fatalf("Ctrl-C: %v %s", err, stderr.String())
		}
		if oneHost(t, e) != host {
			t.Fatal("the host changed")
		}
	})

	t.Run("direct attach alongside", func(t *testing.T) {
		r := e.RunWith(t, []string{"DTB_HOST=off"}, "", "open", url+"/?second", "--jq", ".tab")
		r.Exit(t, 0)
		var tab struct{ Alias string }
		json.Unmarshal([]byte(r.Stdout), &tab)
		r = e.Run(t, "eval", "location.search", "--tab", tab.Alias)
		if strings.TrimSpace(r.Stdout) != `"?second"` {
			t.Fatalf("the host did not see the tab a direct attach opened: %s (open gave alias %q)", r, tab.Alias)
		}
	})

	t.Run("browser killed", func(t *testing.T) {
		browsertest.Kill(browser)
		waitGone(t, host, 5*time.Second)
		r := e.Run(t, "open", url)
		r.Exit(t, 0)
		browser = browserPID(e)
		host = oneHost(t, e)
	})

	t.Run("browser stop", func(t *testing.T) {
		e.Run(t, "browser", "stop").Exit(t, 0)
		waitGone(t, host, time.Second)
		waitGone(t, browser, 5*time.Second)
		if pids := hostProcs(t, e); len(pids) > 0 {
			t.Fatalf("hosts left: %v", pids)
		}
	})
}

// TestHostIdleAndOff: a host exits after its idle limit; DTB_HOST=off
// starts none.
func TestHostIdleAndOff(t *testing.T) {
	e, url := hostCLI(t)
	e.RunWith(t, []string{"DTB_HOST=off"}, "", "open", url).Exit(t, 0)
	if pids := hostProcs(t, e); len(pids) > 0 {
		t.Fatalf("DTB_HOST=off started a host: %v", pids)
	}
	e.RunWith(t, []string{"DTB_HOST_IDLE=1s"}, "", "eval", "1").Exit(t, 0)
	host := oneHost(t, e)
	waitGone(t, host, 5*time.Second)
}

// TestHostNetworkRecord: a POST fetch the page makes in a command is listed by
// a later `dtb network` with its method, status and headers (authorization
// redacted), and `--body ID` prints its response body. Without the host the
// list comes from resource timing (no method for a fetch) and --body has no
// record to read.
func TestHostNetworkRecord(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/save" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Saved", "yes")
			w.WriteHeader(201)
			w.Write([]byte(`{"saved":true,"method":"` + r.Method + `"}`))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>net</title><button id=save onclick="fetch('/api/save', {method: 'POST', body: 'x=1', headers: {Authorization: 'Bearer secret'}}).then(r => r.text()).then(t => window.done = t)">Save</button>`))
	}))
	t.Cleanup(srv.Close)
	stopBrowserAtEnd(t, e)
	e.Run(t, "open", srv.URL).Exit(t, 0)
	e.Run(t, "click", "#save").Exit(t, 0)
	if got := e.Run(t, "wait", "--js", "window.done"); got.Code != 0 {
		t.Fatalf("the fetch did not finish: %s", got)
	}

	type req struct {
		ID              string            `json:"id"`
		URL             string            `json:"url"`
		Method          *string           `json:"method"`
		Status          *int              `json:"status"`
		Type            string            `json:"type"`
		Source          string            `json:"source"`
		RequestHeaders  map[string]string `json:"requestHeaders"`
		ResponseHeaders map[string]string `json:"responseHeaders"`
	}
	var list struct {
		RecordedSince string `json:"recordedSince"`
		Requests      []req  `json:"requests"`
	}
	r := e.Run(t, "network", "--filter", "/api/save")
	r.Exit(t, 0)
	noWarnings(t, r)
	r.Decode(t, &list)
	if len(list.Requests) != 1 || list.RecordedSince == "" {
		t.Fatalf("want one recorded request: %s", r)
	}
	q := list.Requests[0]
	if q.Method == nil || *q.Method != "POST" || q.Status == nil || *q.Status != 201 || q.Type != "fetch" || q.Source != "host" || q.ID == "" {
		t.Fatalf("the POST fetch: %+v", q)
	}
	if q.ResponseHeaders["X-Saved"] != "yes" || q.RequestHeaders["Authorization"] != "(redacted)" {
		t.Fatalf("headers: request %v, response %v", q.RequestHeaders, q.ResponseHeaders)
	}
	r = e.Run(t, "network", "--body", q.ID)
	r.Exit(t, 0)
	var body struct {
		Body     string `json:"body"`
		Base64   bool   `json:"base64"`
		MimeType string `json:"mimeType"`
		Bytes    int    `json:"bytes"`
	}
	r.Decode(t, &body)
	if body.Body != `{"saved":true,"method":"POST"}` || body.Base64 || body.MimeType != "application/json" || body.Bytes != len(body.Body) {
		t.Fatalf("--body: %s", r)
	}
	if r := e.Run(t, "network", "--body", "no-such-id"); r.Code != 3 || !strings.Contains(r.Stderr, "no-such-request") {
		t.Fatalf("--body of an unknown id: %s", r)
	}
	// --har writes HAR 1.2, a relative path in the CLI's folder.
	harDir := t.TempDir()
	e.Dir = harDir
	r = e.Run(t, "network", "--filter", "/api/save", "--har", "save.har", "--jq", ".har.entries")
	e.Dir = ""
	r.Exit(t, 0)
	var har struct {
		Log struct {
			Version string
			Entries []struct {
				Request struct {
					Method  string
					URL     string
					Headers []struct{ Name, Value string }
				}
				Response struct{ Status int }
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(harDir, "save.har"))
	if err != nil {
		t.Fatalf("--har: %v (%s)", err, r)
	}
	if json.Unmarshal(b, &har) != nil || har.Log.Version != "1.2" || len(har.Log.Entries) != 1 {
		t.Fatalf("HAR: %s", b)
	}
	he := har.Log.Entries[0]
	if he.Request.Method != "POST" || he.Response.Status != 201 || !strings.HasSuffix(he.Request.URL, "/api/save") {
		t.Fatalf("HAR entry: %+v", he)
	}
	for _, h := range he.Request.Headers {
		if strings.EqualFold(h.Name, "authorization") && h.Value != "(redacted)" {
			t.Fatalf("HAR leaks a secret header: %v", h)
		}
	}

	off := []string{"DTB_HOST=off"}
	r = e.RunWith(t, off, "", "network", "--filter", "/api/save")
	r.Exit(t, 0)
	list.Requests = nil
	r.Decode(t, &list)
	if len(list.Requests) != 1 || list.Requests[0].Source != "timing" || list.Requests[0].Method != nil {
		t.Fatalf("the direct attach's list: %s", r)
	}
	if r := e.RunWith(t, off, "", "network", "--body", q.ID); r.Code != 3 || !strings.Contains(r.Stderr, "no-such-request") {
		t.Fatalf("--body without the host: %s", r)
	}
}

// Routes of the session host answer, fail and delay the page's requests in
// every tab it uses, show in status and network, and go with unroute; without
// the host routing fails no-host (issue 20.5).
func TestHostRoutes(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Write([]byte("from the server"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>routes</title>`))
	}))
	t.Cleanup(srv.Close)
	stopBrowserAtEnd(t, e)
	e.Run(t, "open", srv.URL).Exit(t, 0)
	body := filepath.Join(t.TempDir(), "items.json")
	os.WriteFile(body, []byte(`{"items":[1,2]}`), 0o600)
	e.Run(t, "route", "*/api/items*", "--body", "@"+body, "--header", "Content-Type: application/json", "--status", "201").Exit(t, 0)
	e.Run(t, "route", "*/api/down", "--abort", "ConnectionRefused").Exit(t, 0)
	fetch := func(path string) string {
		r := e.Run(t, "eval", `fetch("`+path+`").then(async r => r.status + " " + (r.headers.get("content-type") || "") + " " + await r.text(), e => "failed")`, "-r")
		r.Exit(t, 0)
		return strings.TrimSpace(r.Stdout)
	}
	if got := fetch("/api/items?page=2"); got != `201 application/json {"items":[1,2]}` {
		t.Fatalf("routed fetch: %q", got)
	}
	if got := fetch("/api/down"); got != "failed" {
		t.Fatalf("aborted fetch: %q", got)
	}
	if got := fetch("/api/other"); !strings.HasSuffix(got, " from the server") {
		t.Fatalf("a request no route matches: %q", got)
	}
	e.Run(t, "route", "*/api/slow", "--delay", "200ms").Exit(t, 0)
	if got := fetch("/api/slow"); !strings.HasSuffix(got, " from the server") {
		t.Fatalf("a delayed request goes on to the server: %q", got)
	}
	// A new tab is routed too.
	e.Run(t, "open", srv.URL+"/second").Exit(t, 0)
	if got := fetch("/api/items"); !strings.HasPrefix(got, "201 ") {
		t.Fatalf("routed fetch in a second tab: %q", got)
	}
	r := e.Run(t, "network", "--filter", "/api/items", "--jq", "[.requests[] | .routed] | unique | .[]", "-r")
	r.Exit(t, 0)
	if strings.TrimSpace(r.Stdout) != "*/api/items*: fulfilled 201" {
		t.Fatalf("network's routed mark: %s", r)
	}
	r = e.Run(t, "status", "--jq", `.host.routes | map("\(.pattern)=\(.hits)") | join(",")`, "-r")
	if got := strings.TrimSpace(r.Stdout); got != "*/api/slow=1,*/api/down=1,*/api/items*=2" {
		t.Fatalf("status routes: %q (%s)", got, r)
	}
	e.Run(t, "unroute", "*/api/nothing").Fails(t, 3, "no-match")
	e.Run(t, "unroute").Exit(t, 0)
	if got := fetch("/api/items"); !strings.HasSuffix(got, " from the server") {
		t.Fatalf("after unroute: %q", got)
	}
	e.RunWith(t, []string{"DTB_HOST=off"}, "", "route", "*", "--abort", "Failed").Fails(t, 5, "no-host")
	e.Run(t, "route", "*", "--abort", "Bogus").Fails(t, 2, "usage")
	e.Run(t, "route", "*").Fails(t, 2, "usage")
}

// A --cdp browser is attached to directly unless DTB_HOST=always: then the
// host holds that connection too (a remote browser costs a round trip per
// command, not its handshakes; issue 24.4), and browser stop ends that host.
func TestHostAlwaysForCDP(t *testing.T) {
	e, url := hostCLI(t)
	e.Run(t, "browser", "launch").Exit(t, 0)
	r := e.Run(t, "status", "--jq", ".browser.endpoint", "-r")
	r.Exit(t, 0)
	ep := strings.TrimSpace(r.Stdout)
	remote := []string{"--cdp", ep, "--session", "remote"}
	e.Run(t, append([]string{"open", url}, remote...)...).Exit(t, 0)
	if pids := hostProcs(t, e); len(pids) != 0 {
		t.Fatalf("a --cdp command started a host: %v", pids)
	}
	always := []string{"DTB_HOST=always"}
	r = e.RunWith(t, always, "", append([]string{"eval", "document.title"}, remote...)...)
	r.Exit(t, 0)
	noWarnings(t, r)
	host := oneHost(t, e)
	r = e.Run(t, append([]string{"status", "--jq", ".host.pid"}, remote...)...)
	if strings.TrimSpace(r.Stdout) != strconv.Itoa(host) {
		t.Fatalf("status of the remote session names host %q, want %d", r.Stdout, host)
	}
	e.RunWith(t, always, "", append([]string{"browser", "stop"}, remote...)...).Exit(t, 0)
	waitGone(t, host, 5*time.Second)
}

// The host records a tab's console from its first use on, across documents:
// what the first page logged is still listed after a navigation; a direct
// attach sees the current document's only (issue 20.3).
func TestHostConsoleRecord(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>c</title><script>console.warn("logged by ` + r.URL.Path + `")</script>`))
	}))
	t.Cleanup(srv.Close)
	stopBrowserAtEnd(t, e)
	e.Run(t, "open", srv.URL+"/first").Exit(t, 0)
	e.Run(t, "open", srv.URL+"/second", "--current").Exit(t, 0)
	texts := func(env ...string) string {
		t.Helper()
		r := e.RunWith(t, env, "", "console", "--jq", `([.messages[].text] | join(",")) + " " + (.recordedSince != null | tostring)`, "-r")
		r.Exit(t, 0)
		return strings.TrimSpace(r.Stdout)
	}
	if got := texts(); got != "logged by /first,logged by /second true" {
		t.Fatalf("the host's console record: %q", got)
	}
	if got := texts("DTB_HOST=off"); got != "logged by /second false" {
		t.Fatalf("a direct attach's console: %q", got)
	}
	r := e.Run(t, "console", "--clear", "--jq", ".count")
	r.Exit(t, 0)
	if got := texts(); got != "true" {
		t.Fatalf("after --clear: %q", got)
	}
}

// DTB_HOST_RECORD, read when the host starts, bounds each tab's record: the
// newest requests stay.
func TestHostRecordLimit(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Write([]byte("ok"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>ring</title><script>
window.fire = async () => { for (let i = 0; i < 6; i++) await fetch('/api/' + i); return 'done'; };
</script>`))
	}))
	t.Cleanup(srv.Close)
	stopBrowserAtEnd(t, e)
	env := []string{"DTB_HOST_RECORD=3"}
	e.RunWith(t, env, "", "open", srv.URL).Exit(t, 0)
	e.RunWith(t, env, "", "eval", "fire()").Exit(t, 0)
	var list struct {
		Requests []struct{ URL string }
	}
	r := e.Run(t, "network", "--filter", "/api/")
	r.Exit(t, 0)
	r.Decode(t, &list)
	var urls []string
	for _, q := range list.Requests {
		urls = append(urls, q.URL[len(srv.URL):])
	}
	if strings.Join(urls, " ") != "/api/3 /api/4 /api/5" {
		t.Fatalf("a record of 3 kept %q: %s", urls, r)
	}
}

// A relative DTB_STATE_DIR is the CLI's folder's, for the session host too
// (which works from /): commands go through one host, none falls back.
func TestHostRelativeStateDir(t *testing.T) {
	e, url := hostCLI(t)
	e.Dir = filepath.Dir(e.State)
	abs := e.State
	t.Cleanup(func() { browsertest.StopHosts(abs) })
	e.State, e.Cache = "state", "cache"
	for _, args := range [][]string{{"open", url}, {"eval", "1+1"}} {
		r := e.Run(t, args...)
		r.Exit(t, 0)
		noWarnings(t, r)
	}
	st := e.Run(t, "status", "--jq", ".host.pid")
	if pid, _ := strconv.Atoi(strings.TrimSpace(st.Stdout)); pid <= 0 {
		t.Fatalf("no host: %s", st)
	}
}
