package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
)

// The fixture servers of the test binary (Serve), closed when Main ends.
var servers struct {
	mu   sync.Mutex
	open []*httptest.Server
}

// Main is the TestMain of a package of browser tests. Under CI=true a missing
// Chromium fails the binary (MainFail); DTB_STATE_DIR and DTB_CACHE_DIR point
// at a fresh directory (Isolate); setup runs (nil: none), then the tests; at
// the end the fixture servers close, the shared browsers stop (Release) and
// the directory goes. A failing setup fails the binary. It exits.
func Main(m *testing.M, setup func() error) {
	os.Exit(run(m, setup))
}

func run(m *testing.M, setup func() error) int {
	if MainFail(Find().Preferred()) {
		return 1
	}
	remove, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer remove()
	defer Release()
	defer closeServers()
	if setup != nil {
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
	}
	return m.Run()
}

// Serve serves h on 127.0.0.1 (a new port) until Main ends.
func Serve(h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	servers.mu.Lock()
	servers.open = append(servers.open, srv)
	servers.mu.Unlock()
	return srv
}

func closeServers() {
	servers.mu.Lock()
	defer servers.mu.Unlock()
	for _, srv := range servers.open {
		srv.Close()
	}
	servers.open = nil
}

// Preferred is the test binary's shared browser of the preferred build (see
// Binaries.Preferred), launched now when it is not running yet: for a setup
// that wants the browser before the first test. nil without a browser
// installed (the tests that need one skip, see Need).
func Preferred() (*Browser, error) {
	bin := Find().Preferred()
	if bin == "" {
		return nil, nil
	}
	return shared1(bin)
}
