package commands

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// Through an authenticating TLS service, given as an https:// endpoint or as
// a bare wss:// browser URL with its token, status, open, eval, click and
// screenshot work, without and with the session host; a wrong token is
// unauthorized (issue 24).
func TestRemoteServiceCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>remote</title><button id=b onclick="document.title='clicked'">Go</button>`))
	}))
	t.Cleanup(page.Close)
	stopBrowserAtEnd(t, e)
	e.Run(t, "browser", "launch").Exit(t, 0)
	r := e.Run(t, "status", "--jq", ".browser.endpoint + \" \" + .browser.webSocket", "-r")
	r.Exit(t, 0)
	ep, ws, _ := strings.Cut(strings.TrimSpace(r.Stdout), " ")
	svc := browsertest.NewService(t, ep, true)
	ca := svc.CAFile(t)
	wss := "wss://" + strings.TrimPrefix(svc.URL, "https://") + ws[strings.Index(ws, "/devtools/"):] + "?token=" + browsertest.ServiceToken

	for _, c := range []struct {
		name string
		args []string
		env  []string
	}{
		{"https endpoint", []string{"--cdp", svc.URL, "--cdp-header", "Authorization: Bearer " + browsertest.ServiceToken, "--cdp-ca", ca}, nil},
		{"wss browser URL", []string{"--cdp", wss, "--cdp-ca", ca}, nil},
		{"through the host", []string{"--cdp", svc.URL, "--cdp-header", "Authorization: Bearer " + browsertest.ServiceToken, "--cdp-ca", ca}, []string{"DTB_HOST=always"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "wss browser URL" {
				svc.NoDiscovery.Store(true)
				defer svc.NoDiscovery.Store(false)
			}
			run := func(args ...string) browsertest.Result {
				t.Helper()
				return e.RunWith(t, c.env, "", append(append(args, "--session", "remote"), c.args...)...)
			}
			defer run("browser", "stop")
			run("status").Exit(t, 0)
			run("open", page.URL).Exit(t, 0)
			if r := run("eval", "document.title", "-r"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "remote" {
				t.Fatalf("eval: %s", r)
			}
			run("click", "#b").Exit(t, 0)
			if r := run("eval", "document.title", "-r"); strings.TrimSpace(r.Stdout) != "clicked" {
				t.Fatalf("after the click: %s", r)
			}
			run("screenshot").Exit(t, 0)
			if refused := svc.Refused(); len(refused) != 0 {
				t.Fatalf("requests without the token: %v", refused)
			}
		})
	}
	// A service that cuts its connections mid-command: the command ends at
	// once saying the browser went away (not at its --timeout), and the next
	// one connects again, through the host as directly.
	for _, env := range [][]string{nil, {"DTB_HOST=always"}} {
		t.Run(fmt.Sprintf("dropped mid-command %v", env), func(t *testing.T) {
			args := []string{"--session", "dropped", "--cdp", svc.URL, "--cdp-header", "Authorization: Bearer " + browsertest.ServiceToken, "--cdp-ca", ca}
			run := func(a ...string) browsertest.Result { t.Helper(); return e.RunWith(t, env, "", append(a, args...)...) }
			defer run("browser", "stop")
			run("open", page.URL).Exit(t, 0)
			done := make(chan browsertest.Result, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				done <- e.Exec(ctx, env, "", append([]string{"wait", "--js", "(window.polls = (window.polls || 0) + 1, false)", "--timeout", "20s"}, args...)...)
			}()
			// Cut once the wait is polling the page.
			for i := 0; ; i++ {
				if r := run("eval", "window.polls || 0", "-r"); strings.TrimSpace(r.Stdout) != "0" {
					break
				}
				if i == 100 {
					t.Fatal("the wait never polled the page")
				}
				time.Sleep(50 * time.Millisecond)
			}
			svc.DropConnections()
			r := <-done
			if r.Code != 5 || r.Elapsed > 10*time.Second || !strings.Contains(r.Stderr, "browser-gone") {
				t.Fatalf("a wait whose connection was dropped: want exit 5 browser-gone at once\n%s (%v)", r, r.Elapsed)
			}
			if r := run("eval", "document.title", "-r"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "remote" {
				t.Fatalf("the command after the drop: %s", r)
			}
		})
	}
	bad := e.Run(t, "status", "--session", "bad", "--cdp", svc.URL, "--cdp-header", "Authorization: Bearer wrong", "--cdp-ca", ca, "--json-errors")
	if !strings.Contains(bad.Stdout+bad.Stderr, "unauthorized") {
		t.Fatalf("a wrong token: %s", bad)
	}
	e.Run(t, "eval", "1", "--session", "bad", "--cdp", svc.URL, "--cdp-header", "Authorization: Bearer wrong", "--cdp-ca", ca).Fails(t, 5, "unauthorized")
}
