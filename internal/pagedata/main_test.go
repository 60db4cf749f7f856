package pagedata

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/browsertest/sessiontest"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/session"
)

// One headless browser per test binary (browsertest.Shared), a dtb session
// with its own state per test, fixtures from testdata/pagedata on 127.0.0.1,
// plus /__status__/CODE (an empty answer with that status) and /__closed__, a
// loopback URL where nothing listens (a network error).
var (
	fixtureBase string
	closedURL   string
)

func TestMain(m *testing.M) {
	browsertest.Main(m, func() error {
		// A port that was listening and is closed again: connecting is refused.
		dead, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		closedURL = "http://" + dead.Addr().String() + "/refused.js"
		dead.Close()
		fixtureBase = browsertest.Serve(browsertest.PagedataHandler(filepath.Join("..", "..", "testdata", "pagedata"), closedURL)).URL
		return nil
	})
}

func tctx(t *testing.T) context.Context { return sessiontest.Context(t) }

// session is a dtb session attached to the shared browser.
func testSession(t *testing.T) *session.Session {
	t.Helper()
	bin := browsertest.Find().Preferred()
	browsertest.Need(t, bin, "Chromium")
	return sessiontest.Session(t, browsertest.Shared(t, bin).Endpoint)
}

func fixture(path string) string { return fixtureBase + "/" + strings.TrimPrefix(path, "/") }

func openTab(t *testing.T, s *session.Session, url string) *cdp.Page {
	return sessiontest.OpenTab(t, s, url)
}

func connect(t *testing.T, s *session.Session, id string) *cdp.Page {
	return sessiontest.Connect(t, s, id)
}

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
