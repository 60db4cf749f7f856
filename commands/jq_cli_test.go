package commands

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestJQRunawayCLI: a --jq program that never ends is bound by the command:
// its --timeout (exit 4), Ctrl-C and SIGTERM (exit 130), the output ceiling
// for a program that emits without end, and the memory budget for one value
// that grows by recursion. Before, each ran until SIGKILL.
func TestJQRunawayCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "pages"))))
	defer srv.Close()
	defer stopBrowser(t, e)
	e.Run(t, "open", srv.URL+"/index.html").Exit(t, 0)

	e.Run(t, "eval", "1", "--jq", "def f: f; f", "--timeout", "3s").Fails(t, 4, "timeout")
	e.Run(t, "eval", "1", "--jq", "repeat(1)", "--max-bytes", "1MiB").Fails(t, 1, "result-too-large")
	e.Run(t, "eval", "1", "--jq", "def f: [f]; f").Fails(t, 2, "bad-jq")
	// The filter's deadline is the command's: the browser work counts.
	if r := e.Run(t, "eval", "1", "--jq", "[limit(3; repeat(1))]", "--timeout", "3s"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "[1,1,1]" {
		t.Fatalf("a finite filter: %s", r)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			code, stdout, stderr := signalAfter(t, e, sig, 2*time.Second, "eval", "1", "--jq", "def f: f; f", "--timeout", "55s")
			if code != 130 || !strings.Contains(stderr, `"reason":"interrupted"`) || stdout != "" {
				t.Fatalf("exit %d after %v, want 130 interrupted\nstdout: %s\nstderr: %s", code, sig, stdout, stderr)
			}
		})
	}
}

// signalAfter runs dtb with args, sends it sig after d and returns its exit
// code and output.
func signalAfter(t *testing.T, e *browsertest.CLI, sig os.Signal, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(e.Bin, args...)
	cmd.Env = e.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(sig) })
	defer timer.Stop()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(browsertest.RunTimeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("dtb %v did not exit after %v", args, sig)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}
