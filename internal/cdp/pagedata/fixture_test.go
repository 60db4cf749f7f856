package pagedata

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// FixtureHandler serves dir, /__status__/CODE and a script naming the closed
// URL (/__closed__.js sets window.closedURL).
func FixtureHandler(dir, closed string) http.Handler {
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
