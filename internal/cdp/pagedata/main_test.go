package pagedata

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/cdp/cdptest"
	"github.com/dtb-cli/dtb/internal/testbrowser"
)

// One headless browser per test binary (testbrowser.Shared), a dtb session
// with its own state per test, fixtures from testdata/pagedata on 127.0.0.1,
// plus /__status__/CODE (an empty answer with that status) and /__closed__, a
// loopback URL where nothing listens (a network error).
var (
	fixtureBase string
	closedURL   string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	if testbrowser.MainFail(testbrowser.Find().Preferred()) {
		return 1
	}
	remove, err := testbrowser.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fixtureBase = "http://" + ln.Addr().String()
	// A port that was listening and is closed again: connecting is refused.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	closedURL = "http://" + dead.Addr().String() + "/refused.js"
	dead.Close()
	srv := &http.Server{Handler: testbrowser.PagedataHandler(filepath.Join("..", "..", "..", "testdata", "pagedata"), closedURL)}
	go srv.Serve(ln)
	defer srv.Close()
	defer testbrowser.Release()
	return m.Run()
}

func tctx(t *testing.T) context.Context { return cdptest.Context(t) }

// session is a dtb session attached to the shared browser.
func session(t *testing.T) *cdp.Session {
	t.Helper()
	bin := testbrowser.Find().Preferred()
	testbrowser.Need(t, bin, "Chromium")
	return cdptest.Session(t, testbrowser.Shared(t, bin).Endpoint)
}

func fixture(path string) string { return fixtureBase + "/" + strings.TrimPrefix(path, "/") }

func openTab(t *testing.T, s *cdp.Session, url string) *cdp.Page { return cdptest.OpenTab(t, s, url) }

func connect(t *testing.T, s *cdp.Session, id string) *cdp.Page { return cdptest.Connect(t, s, id) }

// evalJSON evaluates expr in the tab and decodes its value into out.
func evalJSON(t *testing.T, p *cdp.Page, expr string, out any) {
	t.Helper()
	raw, err := p.Evaluate(tctx(t), expr, true)
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	if out != nil {
		if err := jsonUnmarshal(raw, out); err != nil {
			t.Fatalf("eval %s: %v (%s)", expr, err, raw)
		}
	}
}
