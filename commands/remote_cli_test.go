package commands

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	bad := e.Run(t, "status", "--session", "bad", "--cdp", svc.URL, "--cdp-header", "Authorization: Bearer wrong", "--cdp-ca", ca, "--json-errors")
	if !strings.Contains(bad.Stdout+bad.Stderr, "unauthorized") {
		t.Fatalf("a wrong token: %s", bad)
	}
	e.Run(t, "eval", "1", "--session", "bad", "--cdp", svc.URL, "--cdp-header", "Authorization: Bearer wrong", "--cdp-ca", ca).Fails(t, 5, "unauthorized")
}
