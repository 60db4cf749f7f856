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
// every dtb run with its time and exit code.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	root       string   // the repository
	dtbBin     string   // the dtb binary built for this run
	baseEnv    []string // environment of every dtb run: no DTB_* of the caller's shell, plus ours
	shared     *relayProc
	browserPID int
	skipWhy    string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) (code int) {
	var err error
	if root, err = filepath.Abs(".."); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if chromium() == "" {
		skipWhy = "no Chromium installed (chromium-headless-shell or chromium)"
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "FAIL: CI=true and no chromium-headless-shell or chromium on the PATH")
			return 1
		}
		return m.Run()
	}
	tmp, err := os.MkdirTemp("", "dtb-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	dtbBin = filepath.Join(tmp, "dtb")
	build := exec.Command("go", "build", "-o", dtbBin, "./cmd/dtb")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: go build: %v\n%s", err, out)
		return 1
	}
	baseEnv = append(cleanEnv(),
		"DTB_STATE_DIR="+filepath.Join(tmp, "state"),
		"DTB_CACHE_DIR="+filepath.Join(tmp, "cache"),
		"DTB_SESSION=e2e",
		"DTB_JSON_ERRORS=1",
		"NO_COLOR=1",
	)
	if p := os.Getenv("DTB_CHROME"); p != "" {
		baseEnv = append(baseEnv, "DTB_CHROME="+p)
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
	r := runDtb(ctx, nil, "", "browser", "launch")
	if r.code != 0 {
		fmt.Fprintf(os.Stderr, "FAIL: dtb browser launch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		return 1
	}
	var launched struct{ PID int }
	if err := json.Unmarshal([]byte(r.stdout), &launched); err != nil || launched.PID == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: dtb browser launch printed %q\n", r.stdout)
		return 1
	}
	browserPID = launched.PID
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		if r := runDtb(sctx, nil, "", "browser", "stop"); r.code != 0 {
			fmt.Fprintf(os.Stderr, "e2e: dtb browser stop: exit %d %s\n", r.code, r.stderr)
		}
		// Fallback: the browser leads its own process group.
		if alive(browserPID) {
			syscall.Kill(-browserPID, syscall.SIGKILL)
			syscall.Kill(browserPID, syscall.SIGKILL)
		}
	}()
	return m.Run()
}

// chromium is the browser dtb will launch: DTB_CHROME, else the first on the PATH.
func chromium() string {
	if p := os.Getenv("DTB_CHROME"); p != "" {
		return p
	}
	for _, n := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// needBrowser skips (or, under CI=true, has already failed in TestMain) when
// there is no Chromium.
func needBrowser(t *testing.T) {
	t.Helper()
	if dtbBin == "" {
		t.Skip(skipWhy)
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DTB_") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return env
}

// ---------------------------------------------------------------- running dtb

type result struct {
	args           []string
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// runDtb runs the dtb binary; env entries are added to baseEnv.
func runDtb(ctx context.Context, env []string, stdin string, args ...string) result {
	cmd := exec.CommandContext(ctx, dtbBin, args...)
	cmd.Env = append(append([]string(nil), baseEnv...), env...)
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{args: args, stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code = -1
		r.stderr += "\n(e2e: " + err.Error() + ")"
	}
	return r
}

// dtb runs dtb with a 60 s safety deadline.
func dtb(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runDtb(ctx, nil, "", args...)
	if os.Getenv("E2E_TRACE") != "" {
		t.Logf("%6dms exit %d: dtb %s", r.elapsed.Milliseconds(), r.code, strings.Join(args, " "))
	}
	return r
}

func (r result) String() string {
	return fmt.Sprintf("dtb %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// ok requires exit 0 and returns stdout decoded (nil when stdout is empty).
func (r result) ok(t *testing.T) map[string]any {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("want exit 0\n%s", r)
	}
	if strings.TrimSpace(r.stdout) == "" {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		return nil // a --jq scalar; use r.stdout
	}
	return doc
}

// fails requires the exit code, nothing on stdout and an error document on
// stderr with the reason; it returns that document.
func (r result) fails(t *testing.T, code int, reason string) map[string]any {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d reason %s\n%s", code, reason, r)
	}
	if r.stdout != "" {
		t.Fatalf("stdout on failure\n%s", r)
	}
	doc := errorDoc(r.stderr)
	if doc == nil || doc["reason"] != reason || doc["ok"] != false {
		t.Fatalf("want reason %s in the stderr error document\n%s", reason, r)
	}
	return doc
}

// errorDoc is the last JSON line of stderr with a reason (warnings come first).
func errorDoc(stderr string) map[string]any {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var doc map[string]any
		if json.Unmarshal([]byte(lines[i]), &doc) == nil && doc["reason"] != nil {
			return doc
		}
	}
	return nil
}

// warnings are the stderr warning documents' reasons.
func warnings(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		var doc map[string]any
		if json.Unmarshal([]byte(line), &doc) == nil {
			if w, ok := doc["warning"].(string); ok {
				out = append(out, w)
			}
		}
	}
	return out
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
	cmd := exec.Command(dtbBin, args...)
	cmd.Env = baseEnv
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
	doc := r.ok(t)
	tab, _ := doc["tab"].(map[string]any)
	id, _ := tab["id"].(string)
	if id == "" {
		t.Fatalf("no tab id\n%s", r)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := runDtb(ctx, nil, "", "close", "--tab", id)
		if os.Getenv("E2E_TRACE") != "" {
			t.Logf("%6dms close", r.elapsed.Milliseconds())
		}
		if r.code != 0 {
			t.Errorf("closing tab %s: %s", id, r)
		}
	})
	return id
}

// evalIn evaluates JS in a tab and returns the JSON it printed.
func evalIn(t *testing.T, tab, expr string) string {
	t.Helper()
	r := dtb(t, "eval", "--tab", tab, expr)
	r.ok(t)
	return strings.TrimSpace(r.stdout)
}

// waitConnected waits until the relay has a live snapshot of the reporter.
func waitConnected(t *testing.T, relay, reporter string) {
	t.Helper()
	args := []string{"state", "--relay", relay, "--until", ".connection.connected", "--timeout", "20s", "--jq", ".connection.connected"}
	if reporter != "" {
		args = append(args, "--reporter", reporter)
	}
	r := dtb(t, args...)
	r.ok(t)
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

func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return !(i >= 0 && i+2 < len(s) && s[i+2] == 'Z')
}
