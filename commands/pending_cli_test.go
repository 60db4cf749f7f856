package commands

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// A tab held by a navigation whose server never answers: the command ends
// at its --timeout with navigation-pending (not page-unresponsive blaming a
// script), the load is stopped, and the next command is answered (issue 23.5).
func TestNavigationPendingCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	hole := browsertest.BlackHole(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>here</title>`))
	}))
	t.Cleanup(page.Close)
	e := newCLI(t)
	stopBrowserAtEnd(t, e)
	e.Run(t, "open", page.URL).Exit(t, 0)
	e.Run(t, "eval", `setTimeout(() => { location.href = "http://`+hole+`/x"; }, 0), 1`).Exit(t, 0)
	r := e.Run(t, "eval", "1", "--timeout", "1s")
	r.Fails(t, 4, "navigation-pending")
	if r = e.Run(t, "eval", "document.title", "-r", "--timeout", "5s"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "here" {
		t.Fatalf("after the stopped load: %s", r)
	}
}
