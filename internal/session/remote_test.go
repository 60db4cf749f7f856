package session

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/browsertest"
	"github.com/dtb-cli/dtb/internal/cdp"
)

func newServiceStandIn(t *testing.T) *browsertest.Service {
	return browsertest.NewService(t, shared.Endpoint, false)
}

// Through a service that demands its token on every request, every step of a
// session carries it (issue 24.1): with the token in a header or in the
// URL's query; without it, dtb says unauthorized, not "nothing answers".
func TestRemoteServiceCredentials(t *testing.T) {
	needBrowser(t)
	svc := newServiceStandIn(t)
	for _, c := range []struct {
		name    string
		cdp     string
		headers http.Header
	}{
		{"header", svc.URL, http.Header{"Authorization": {"Bearer s3cret"}}},
		{"query", svc.URL + "/?token=s3cret", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(tctx(t), Config{StateDir: t.TempDir(), CDP: c.cdp, Headers: c.headers, ConnectTimeout: 5e9})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			useTab(t, s)
			if r := svc.Refused(); len(r) != 0 {
				t.Fatalf("requests sent without the token: %v", r)
			}
		})
	}
	t.Run("websocket only", func(t *testing.T) {
		// No HTTP discovery at all: the browser websocket URL is all there is.
		v, err := browser.FetchVersion(tctx(t), shared.Endpoint, nil)
		if err != nil {
			t.Fatal(err)
		}
		svc.NoDiscovery.Store(true)
		defer svc.NoDiscovery.Store(false)
		ws := "ws://" + strings.TrimPrefix(svc.URL, "http://") + browser.PathOf(v.WebSocket) + "?token=s3cret"
		s, err := Open(tctx(t), Config{StateDir: t.TempDir(), CDP: ws, ConnectTimeout: 5e9})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		useTab(t, s)
		if r := svc.Refused(); len(r) != 0 {
			t.Fatalf("requests sent without the token: %v", r)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		s, err := Open(tctx(t), Config{StateDir: t.TempDir(), CDP: svc.URL, ConnectTimeout: 5e9})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Browser(tctx(t)); reason(err) != "unauthorized" {
			t.Fatalf("without the token: %v, want unauthorized", err)
		}
	})
}

// A service over TLS with a private CA: refused without --cdp-ca (the
// certificate is not trusted, and nothing turns the check off), trusted with
// it for discovery and every websocket (issue 24.3).
func TestRemoteServiceTLS(t *testing.T) {
	needBrowser(t)
	svc := browsertest.NewService(t, shared.Endpoint, true)
	ca := svc.CAFile(t)
	hdr := http.Header{"Authorization": {"Bearer s3cret"}}

	s, err := Open(tctx(t), Config{StateDir: t.TempDir(), CDP: svc.URL, Headers: hdr, ConnectTimeout: 5e9})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Browser(tctx(t))
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a private CA's service without --cdp-ca: %v, want a certificate error", err)
	}

	s, err = Open(tctx(t), Config{StateDir: t.TempDir(), CDP: svc.URL, Headers: hdr, CAFile: ca, ConnectTimeout: 5e9})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	useTab(t, s)

	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if _, err := Open(tctx(t), Config{StateDir: t.TempDir(), CDP: svc.URL, CAFile: bad}); reason(err) != "usage" {
		t.Fatalf("--cdp-ca without a certificate: %v", err)
	}
}

// useTab opens a fixture in a new tab of s, lists the tabs, evaluates in it
// and closes it: every kind of request a session makes of its browser.
func useTab(t *testing.T, s *Session) {
	t.Helper()
	ctx := tctx(t)
	p, id := openPage(t, s, ctx, fixture("tall.html"), cdp.WaitLoad)
	if pages, err := s.ListPages(ctx); err != nil || len(pages) == 0 {
		t.Fatalf("list: %v %v", pages, err)
	}
	raw, err := p.Evaluate(ctx, "location.pathname", false)
	if err != nil || string(raw) != `"/tall.html"` {
		t.Fatalf("eval: %s %v", raw, err)
	}
	if _, err := s.CloseTab(ctx, id); err != nil {
		t.Fatalf("close: %v", err)
	}
}
