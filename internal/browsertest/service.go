package browsertest

import (
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// ServiceToken is the credential a Service demands.
const ServiceToken = "s3cret"

// Service is a stand-in for a remote browser service in front of a browser
// endpoint: it forwards a request (discovery, tab list, new and closed tabs,
// websockets) only when it carries the token, as `Authorization: Bearer
// s3cret` or `?token=s3cret`, and answers 401 otherwise, recording what it
// refused. Stopped when the test ends.
type Service struct {
	*httptest.Server
	mu      sync.Mutex
	refused []string
	// NoDiscovery: /json/* answers 404, as on a service with websockets only.
	NoDiscovery atomic.Bool
	conns       map[net.Conn]bool
}

// NewService starts a Service for the browser at endpoint (http://host:port),
// over TLS (a certificate of httptest's own CA: see CAFile) or not.
func NewService(t testing.TB, endpoint string, overTLS bool) *Service {
	t.Helper()
	target, _ := url.Parse(endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	s := &Service{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Header.Get("Authorization") != "Bearer "+ServiceToken && q.Get("token") != ServiceToken {
			s.mu.Lock()
			s.refused = append(s.refused, r.Method+" "+r.URL.Path)
			s.mu.Unlock()
			http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
			return
		}
		if s.NoDiscovery.Load() && strings.HasPrefix(r.URL.Path, "/json") {
			http.NotFound(w, r)
			return
		}
		// The browser behind it knows no token.
		q.Del("token")
		r.URL.RawQuery = strings.ReplaceAll(q.Encode(), "=&", "&")
		if strings.HasPrefix(r.URL.Path, "/json/new") {
			r.URL.RawQuery = strings.TrimSuffix(r.URL.RawQuery, "=")
		}
		r.Header.Del("Authorization")
		proxy.ServeHTTP(w, r)
	}))
	// Every connection is tracked, websockets (hijacked) included, so that
	// DropConnections can cut them as a service that ends sessions does.
	s.conns = map[net.Conn]bool{}
	s.Config.ConnState = func(c net.Conn, st http.ConnState) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch st {
		case http.StateNew:
			s.conns[c] = true
		case http.StateClosed:
			delete(s.conns, c)
		}
	}
	if overTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	// Before Close (cleanups run last first): httptest forgets a hijacked
	// connection, so the websockets it forwards would outlive the test.
	t.Cleanup(s.DropConnections)
	return s
}

// DropConnections closes every connection open to the service, websockets
// included: a service that ends its sessions (an idle limit, a session
// length) or a network that drops them.
func (s *Service) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
		delete(s.conns, c)
	}
}

// Refused are the requests the service refused for want of the token.
func (s *Service) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

// CAFile writes the certificate of a TLS service as PEM into a file of the
// test's and returns its path (for --cdp-ca).
func (s *Service) CAFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
