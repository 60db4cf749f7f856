package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestMCPResilience drives the built dtb mcp over raw stdio: bad lines are
// answered -32700/-32600 and the server keeps serving; local URLs and files
// outside the output folder are refused; a looping jq filter ends at its
// timeout, a cancelled call gets no response and later calls work; SIGTERM
// mid-call ends the server promptly.
func TestMCPResilience(t *testing.T) {
	needBrowser(t)
	cmd := exec.Command(cli.Bin, "mcp")
	cmd.Env = cli.Environ()
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
		close(lines)
	}()
	send := func(s string) { io.WriteString(in, s+"\n") }
	next := func() map[string]any {
		select {
		case m := <-lines:
			return m
		case <-time.After(60 * time.Second):
			t.Fatal("no answer")
		}
		return nil
	}
	code := func(m map[string]any) any { e, _ := m["error"].(map[string]any); return e["code"] }
	for line, want := range map[string]float64{"not json": -32700, "{}": -32600, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`: -32600} {
		send(line)
		if m := next(); code(m) != want {
			t.Errorf("%s: %v, want %v", line, m, want)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int, tool, args string) {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	}
	text := func(m map[string]any) string {
		r, _ := m["result"].(map[string]any)
		c, _ := r["content"].([]any)
		if len(c) == 0 {
			return fmt.Sprint(m)
		}
		return fmt.Sprint(c[0].(map[string]any)["text"])
	}
	call(2, "open", `{"url":"file:///etc/passwd"}`)
	if m := next(); !strings.Contains(text(m), `"url-refused"`) {
		t.Errorf("file URL: %v", m)
	}
	call(3, "screenshot", `{"out":"/tmp/dtb-mcp-evil.jpg"}`)
	if m := next(); !strings.Contains(text(m), `"path-refused"`) {
		t.Errorf("out outside: %v", m)
	}
	call(4, "open", `{"url":"data:text/html,<p>hello</p>"}`)
	next()
	call(5, "extract", `{"include":"text","jq":"def f: f; f","timeout":"2s"}`)
	if m := next(); !strings.Contains(text(m), `"timeout"`) {
		t.Errorf("looping jq: %v", m)
	}
	call(6, "extract", `{"include":"text","jq":"def f: f; f","timeout":"60s"}`)
	time.Sleep(time.Second)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	call(7, "eval", `{"expr":"document.body.textContent"}`)
	if m := next(); m["id"] != float64(7) || text(m) != `"hello"` {
		t.Errorf("after a cancelled call, got %v (a cancelled request gets no response)", m)
	}
	call(8, "extract", `{"include":"text","jq":"def f: f; f","timeout":"60s"}`)
	time.Sleep(time.Second)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		t.Logf("exited %v after SIGTERM", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("dtb mcp did not exit after SIGTERM mid-call")
	}
}

// A client that writes its requests and closes stdin at once (a shell pipe)
// still gets every answer before the server exits.
func TestMCPAnswersBeforeEOF(t *testing.T) {
	cmd := exec.Command(cli.Bin, "mcp")
	cmd.Env = cli.Environ()
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the server did not exit after stdin closed")
	}
	if err != nil {
		t.Fatalf("dtb mcp: %v", err)
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if id, ok := m["id"].(float64); ok && m["result"] != nil {
				ids[id] = true
			}
		}
	}
	for _, id := range []float64{1, 2, 3} {
		if !ids[id] {
			t.Fatalf("no answer to request %v before the server exited:\n%s", id, out)
		}
	}
}

// --tools core offers the ten tools of a page's loop and the toolbar, in a
// tools/list of a few KB (issue 21.3).
func TestMCPCoreProfile(t *testing.T) {
	cmd := exec.Command(cli.Bin, "mcp", "--tools", "core")
	cmd.Env = cli.Environ()
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dtb mcp --tools core: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID     float64 `json:"id"`
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID != 2 {
			continue
		}
		var names []string
		for _, tl := range m.Result.Tools {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != "click,extract,inspect,open,press,run,screenshot,select,state,type" || len(line) > 12<<10 {
			t.Fatalf("core tools: %v, %d bytes", names, len(line))
		}
		return
	}
	t.Fatalf("no tools/list answer:\n%s", out)
}

// A server its host SIGKILLs cannot stop its browser; the next server ends
// what it left (the browser and the session's files).
func TestMCPKilledServerLeavesNoBrowser(t *testing.T) {
	needBrowser(t)
	a := exec.Command(cli.Bin, "mcp")
	a.Env = cli.Environ()
	in, _ := a.StdinPipe()
	out, _ := a.StdoutPipe()
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Process.Kill()
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<24)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open","arguments":{"url":"data:text/html,<p>hi</p>"}}}`,
	} {
		io.WriteString(in, line+"\n")
	}
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":2`) {
			break
		}
	}
	stateFile := filepath.Join(cli.State, "sessions", fmt.Sprintf("mcp-%d.json", a.Process.Pid))
	var st struct{ Browser struct{ PID int } }
	b, err := os.ReadFile(stateFile)
	if err != nil || json.Unmarshal(b, &st) != nil || st.Browser.PID == 0 {
		t.Fatalf("the first server's session: %s %v", b, err)
	}
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	if !browsertest.Alive(st.Browser.PID) {
		t.Fatal("precondition: the killed server's browser should still run")
	}
	defer browsertest.Kill(st.Browser.PID)

	next := exec.Command(cli.Bin, "mcp")
	next.Env = cli.Environ()
	next.Stdin = strings.NewReader("")
	if err := next.Run(); err != nil {
		t.Fatalf("the next server: %v", err)
	}
	for i := 0; browsertest.Alive(st.Browser.PID); i++ {
		if i > 100 {
			t.Fatalf("the killed server's browser %d still runs", st.Browser.PID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(stateFile); !os.IsNotExist(err) {
		t.Fatalf("the killed server's session file remains: %v", err)
	}
}
