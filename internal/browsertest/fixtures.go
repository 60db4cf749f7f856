package browsertest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// PagedataHandler serves dir (testdata/pagedata), /__status__/CODE (a short
// answer with that status) and /__closed__.js, a script setting
// window.closedURL to closed: a loopback URL where nothing listens, so a
// request to it is a network error.
func PagedataHandler(dir, closed string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/__status__/", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/__status__/"), "%d", &code)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	})
	mux.HandleFunc("/__closed__.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		b, _ := json.Marshal(closed)
		fmt.Fprintf(w, "window.closedURL = %s;\n", b)
	})
	return mux
}

// BlackHole listens on a loopback port that accepts connections and never
// answers (a hung endpoint, a navigation that never gets a response) and
// returns its address; the listener and what it holds close at the end of t.
func BlackHole(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return l.Addr().String()
}
