// Package e2e runs the real dtb binary against the real fixture app
// (testdata/toolbar) served by the real `dtb relay`, in one headless Chromium
// that dtb itself launched. Every assertion is on what a user sees: stdout JSON,
// the stderr error document's reason, the exit code.
//
// TestMain builds dtb once, starts a shared relay (dtb relay --static
// testdata/toolbar --listen 127.0.0.1:0) and launches the browser (dtb browser
// launch, isolated DTB_STATE_DIR / DTB_CACHE_DIR and session "e2e"). Without
// Chromium (DTB_CHROME, else chromium-headless-shell or chromium on the PATH) the
// tests skip, except under CI=true, where that is a failure. E2E_TRACE=1 logs
// every dtb run with its time and exit code. inspector_test.go drives `dtb mcp`
// with the MCP Inspector's CLI (scripts/setup installs it; the same CI rule).
//
// upstream_test.go is a loopback stand-in for the upstream playground relay (one
// slot, ?reporter= ignored) that tests start where dtb must not trust the relay to
// target a page; DTB_TEST_RELAY_PORTS pins the ports relay discovery probes.
package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

var (
	root       string           // the repository
	chrome     string           // the browser dtb launches; "" when there is none
	cli        *browsertest.CLI // every dtb run: no DTB_* of the caller's shell, plus ours
	shared     *relayProc
	browserPID int
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) (code int) {
	var err error
	if root, err = filepath.Abs(".."); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	bins := browsertest.Find()
	chrome = cmp.Or(bins.Chrome, bins.Preferred())
	if browsertest.MainFail(chrome) {
		return 1
	}
	if chrome == "" {
		return m.Run()
	}
	tmp, err := os.MkdirTemp("", "dtb-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	defer browsertest.Release()
	defer func() { browsertest.StopHosts(filepath.Join(tmp, "state")) }()

	bin, err := browsertest.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	cli = browsertest.NewCLI(bin, tmp, "DTB_SESSION=e2e", "DTB_JSON_ERRORS=1", "NO_COLOR=1")
	cli.Dir = root
	cli.Trace = os.Getenv("E2E_TRACE") != ""
	if p := os.Getenv("DTB_CHROME"); p != "" {
		cli.Env = append(cli.Env, "DTB_CHROME="+p)
	}

	shared, err = startRelayProc()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: cannot start the shared relay:", err)
		return 1
	}
	defer func() {
		shared.stop()
		if code != 0 {
			fmt.Fprintf(os.Stderr, "shared relay %s stderr:\n%s", shared.URL, shared.stderr)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := cli.Exec(ctx, nil, "", "browser", "launch")
	if r.Code != 0 {
		fmt.Fprintf(os.Stderr, "FAIL: dtb browser launch: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		return 1
	}
	var launched struct{ PID int }
	if err := json.Unmarshal([]byte(r.Stdout), &launched); err != nil || launched.PID == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: dtb browser launch printed %q\n", r.Stdout)
		return 1
	}
	browserPID = launched.PID
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		if r := cli.Exec(sctx, nil, "", "browser", "stop"); r.Code != 0 {
			fmt.Fprintf(os.Stderr, "e2e: dtb browser stop: exit %d %s\n", r.Code, r.Stderr)
		}
		// Fallback: the browser leads its own process group.
		if browsertest.Alive(browserPID) {
			browsertest.Kill(browserPID)
		}
	}()
	return m.Run()
}

// needBrowser skips (or, under CI=true, has already failed in TestMain) when
// there is no Chromium.
func needBrowser(t *testing.T) {
	t.Helper()
	browsertest.Need(t, chrome, "Chromium")
}

// dtb runs dtb (browsertest.RunTimeout at most; E2E_TRACE=1 logs it).
func dtb(t *testing.T, args ...string) browsertest.Result {
	t.Helper()
	return cli.Run(t, args...)
}

// ---------------------------------------------------------------- relays

type relayProc struct {
	URL    string
	PID    int
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error // Wait's error, once done is closed
	once   sync.Once
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRelayProc starts dtb relay serving the fixture on a free loopback port and
// reads its ready line.
func startRelayProc(extra ...string) (*relayProc, error) {
	args := append([]string{"relay", "--static", filepath.Join(root, "testdata", "toolbar"), "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(cli.Bin, args...)
	cmd.Env = cli.Environ()
	cmd.Dir = root
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &relayProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.PID = cmd.Process.Pid
	go func() { p.err = cmd.Wait(); close(p.done) }()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-lines:
		var ready struct {
			Listening string
			PID       int
		}
		if !ok || json.Unmarshal([]byte(line), &ready) != nil || ready.Listening == "" {
			p.kill()
			return nil, fmt.Errorf("dtb relay printed %q; stderr: %s", line, p.stderr)
		}
		if ready.PID != p.PID {
			p.kill()
			return nil, fmt.Errorf("dtb relay reports pid %d, started %d", ready.PID, p.PID)
		}
		p.URL = ready.Listening
		return p, nil
	case <-time.After(15 * time.Second):
		p.kill()
		return nil, fmt.Errorf("dtb relay printed nothing in 15 s; stderr: %s", p.stderr)
	}
}

func (p *relayProc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and waits (SIGKILL after 10 s); it returns the exit code.
func (p *relayProc) stop() int {
	p.once.Do(func() { p.cmd.Process.Signal(syscall.SIGTERM) })
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	return p.cmd.ProcessState.ExitCode()
}

// startRelay starts a relay of the test's own, stopped by PID when the test ends.
func startRelay(t *testing.T, extra ...string) *relayProc {
	t.Helper()
	p, err := startRelayProc(extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		start := time.Now()
		p.stop()
		if os.Getenv("E2E_TRACE") != "" {
			t.Logf("%6dms relay stop", time.Since(start).Milliseconds())
		}
		if t.Failed() {
			t.Logf("relay %s stderr:\n%s", p.URL, p.stderr)
		}
	})
	return p
}

// page is the fixture's URL on a relay, with URL query knobs.
func (p *relayProc) page(knobs string) string {
	if knobs == "" {
		return p.URL + "/"
	}
	return p.URL + "/?" + knobs
}

// ---------------------------------------------------------------- tabs

var uniq atomic.Int64

// reporterID is a reporterId no other test uses.
func reporterID(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), uniq.Add(1))
}

// openTab opens url in a new tab of the session's browser and closes it when the
// test ends; it returns the tab's target id.
func openTab(t *testing.T, u string) string {
	t.Helper()
	r := dtb(t, "open", u)
	doc := r.OK(t)
	tab, _ := doc["tab"].(map[string]any)
	id, _ := tab["id"].(string)
	if id == "" {
		t.Fatalf("no tab id\n%s", r)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := cli.Exec(ctx, nil, "", "close", "--tab", id)
		if cli.Trace {
			t.Logf("%6dms close", r.Elapsed.Milliseconds())
		}
		if r.Code != 0 {
			t.Errorf("closing tab %s: %s", id, r)
		}
	})
	return id
}

// openReporter opens the fixture on the shared relay in a new tab, with a
// reporterId of its own after the query knobs, and waits until it has reported.
func openReporter(t *testing.T, prefix, knobs string) (rid, tab string) {
	t.Helper()
	rid = reporterID(prefix)
	q := "reporterId=" + rid
	if knobs != "" {
		q = knobs + "&" + q
	}
	tab = openTab(t, shared.page(q))
	waitConnected(t, shared.URL, rid)
	return rid, tab
}

// bothTransports are the flags that aim a toolbar command at that page through
// the shared relay and over CDP.
func bothTransports(rid, tab string) map[string][]string {
	return map[string][]string{
		"relay": {"--relay", shared.URL, "--reporter", rid},
		"cdp":   {"--via", "cdp", "--tab", tab},
	}
}

// evalIn evaluates JS in a tab and returns the JSON it printed.
func evalIn(t *testing.T, tab, expr string) string {
	t.Helper()
	r := dtb(t, "eval", "--tab", tab, expr)
	r.OK(t)
	return strings.TrimSpace(r.Stdout)
}

// waitConnected waits until the relay has a live snapshot of the reporter.
func waitConnected(t *testing.T, relay, reporter string) {
	t.Helper()
	args := []string{"state", "--relay", relay, "--until", ".connection.connected", "--timeout", "20s", "--jq", ".connection.connected"}
	if reporter != "" {
		args = append(args, "--reporter", reporter)
	}
	r := dtb(t, args...)
	r.OK(t)
}

// poll retries cond every 50 ms until it holds or d passes.
func poll(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---------------------------------------------------------------- JSON

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

// topKeys are the top-level keys of a JSON object, in document order.
func topKeys(t *testing.T, s string) []string {
	t.Helper()
	var keys []string
	for _, m := range members(t, s) {
		keys = append(keys, m[0])
	}
	return keys
}

// members are a JSON object's top-level members in document order, each value
// compacted but otherwise byte for byte (key order, number literals, escapes).
func members(t *testing.T, doc string) [][2]string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", doc)
	}
	var out [][2]string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{tok.(string), c.String()})
	}
	return out
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func flagEffective(t *testing.T, stateDoc string, key string) any {
	t.Helper()
	doc := decode(t, stateDoc)
	rows, _ := get(doc, "extensions", "flags", "flags").([]any)
	for _, r := range rows {
		if get(r, "key") == key {
			return get(r, "effective")
		}
	}
	t.Fatalf("no flag %s in %s", key, stateDoc)
	return nil
}

func hostPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
