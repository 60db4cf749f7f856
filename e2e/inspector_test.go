package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// inspectorBin is the MCP Inspector's command (scripts/setup installs it
// with npm): DTB_TEST_MCP_INSPECTOR, else mcp-inspector on the PATH; "" when
// there is none.
func inspectorBin() string {
	if p := os.Getenv("DTB_TEST_MCP_INSPECTOR"); p != "" {
		return p
	}
	p, _ := exec.LookPath("mcp-inspector")
	return p
}

// TestMCPInspector drives `dtb mcp` with a client dtb does not own: the MCP
// Inspector's CLI mode, which starts the server over stdio, makes one
// request and exits (closing the server's stdin). The server runs its own
// session, whose browser it launches for the tool call and stops when its
// stdin closes. Without the Inspector the test skips, or fails under CI=true.
func TestMCPInspector(t *testing.T) {
	needBrowser(t)
	bin := inspectorBin()
	browsertest.Need(t, bin, "MCP Inspector (mcp-inspector; scripts/setup installs it)")
	const session = "inspector"
	t.Cleanup(func() {
		// A browser the server failed to stop is stopped here, then by PID.
		if st, err := sessionBrowser(session); err == nil && st > 0 {
			t.Errorf("dtb mcp left its browser (pid %d) running", st)
			dtb(t, "browser", "stop", "--session", session)
			browsertest.Kill(st)
		}
	})

	list := inspector(t, bin, session, "--method", "tools/list")
	var tools struct {
		Tools []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(list), &tools); err != nil {
		t.Fatalf("tools/list printed %q: %v", list, err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"open", "inspect", "click", "type", "eval", "screenshot", "extract", "run"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %d tools", want, len(tools.Tools))
		}
	}

	out := inspector(t, bin, session, "--method", "tools/call", "--tool-name", "eval", "--tool-arg", "expr=1+1")
	var call struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal([]byte(out), &call); err != nil || call.IsError || len(call.Content) == 0 || strings.TrimSpace(call.Content[0].Text) != "2" {
		t.Fatalf("tools/call eval 1+1 printed %q (%v)", out, err)
	}
	// The call launched the session's browser; the server stopped it when
	// the Inspector closed its stdin.
	if pid, err := sessionBrowser(session); err != nil || pid != 0 {
		t.Errorf("after the Inspector exited the session still has a browser (pid %d, %v)", pid, err)
	}
}

// inspector runs the MCP Inspector's CLI on `dtb mcp --session session` and
// returns its stdout. The Inspector and the server it starts are one process
// group, killed as one if the run outlives its time.
func inspector(t *testing.T, bin, session string, args ...string) string {
	t.Helper()
	argv := []string{"--cli"}
	// The Inspector gives the server only a few variables of its own
	// environment: dtb's go with -e.
	for _, kv := range cli.Environ() {
		if strings.HasPrefix(kv, "DTB_") {
			argv = append(argv, "-e", kv)
		}
	}
	argv = append(argv, cli.Bin, "mcp", "--session", session)
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Env = cli.Environ()
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		browsertest.Kill(cmd.Process.Pid)
		return nil
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// Whatever the Inspector left in its group goes with it (the group, not
	// the reaped PID).
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", filepath.Base(bin), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// sessionBrowser is the PID of the browser the session's file records (0
// for none).
func sessionBrowser(session string) (int, error) {
	b, err := os.ReadFile(filepath.Join(cli.State, "sessions", session+".json"))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var st struct {
		Browser *struct{ PID int }
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return 0, err
	}
	if st.Browser == nil {
		return 0, nil
	}
	return st.Browser.PID, nil
}
