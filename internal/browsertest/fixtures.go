package browsertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
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
