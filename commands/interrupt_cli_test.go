package commands

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestInterruptCLI: Ctrl-C (SIGINT) during any long-running browser command
// exits 130 with reason interrupted and nothing on stdout, whatever the
// command was waiting for (every wait form, a navigation that never ends, the
// readiness wait of extract). The relay and state --until are covered by
// testdata/script/interrupt.txtar.
func TestInterruptCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("..", "testdata", "pages"))))
	// A page whose load never ends: the body stays open.
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>hang</title><p>loading"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(stop)
	defer stopBrowser(t, e)
	e.Run(t, "open", srv.URL+"/index.html").Exit(t, 0)
	e.Run(t, "open", srv.URL+"/hang", "--wait", "none").Exit(t, 0)

	for _, args := range [][]string{
		{"wait", "--load"},
		{"wait", "--css", ".never-there"},
		{"wait", "--css", "p", "--gone"},
		{"wait", "--url", "*/never/*"},
		{"wait", "--js", "false"},
		{"wait", "--quiet", "50s"},
		{"wait", "--text", "never there", "--load"},
		{"open", srv.URL + "/hang", "--current"},
		{"extract", "--wait-css", ".never-there", "--ready-timeout", "50s"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := interruptAfter(t, e, 2*time.Second, append(args, "--timeout", "55s")...)
			if code != 130 || !strings.Contains(stderr, `"reason":"interrupted"`) || stdout != "" {
				t.Fatalf("exit %d after SIGINT, want 130 interrupted\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
		})
	}
}

// interruptAfter runs dtb with args, sends it SIGINT after d and returns its
// exit code and output.
func interruptAfter(t *testing.T, e *browsertest.CLI, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(e.Bin, args...)
	cmd.Env = e.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(os.Interrupt) })
	defer timer.Stop()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(browsertest.RunTimeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("dtb %v did not exit after SIGINT", args)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}
