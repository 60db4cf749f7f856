package commands

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// A click that starts a download saves the file (mode 0600, the session's
// download folder, its suggested name) and reports it; a link whose response
// is an attachment counts too, a download link whose response comes after
// the click's settle, and a button whose script clicks a download link (the
// page saw a click on one: its download is waited for); a click that
// downloads nothing says nothing (issue 20.4). With and without the session
// host.
func TestClickDownloads(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/report.csv":
			// A slow response: the download begins after the click's settle.
			time.Sleep(300 * time.Millisecond)
			w.Header().Set("Content-Type", "text/csv")
			w.Write([]byte("a,b\n1,2\n"))
		case "/export":
			w.Header().Set("Content-Disposition", `attachment; filename="export.json"`)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"rows":3}`))
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<!doctype html><title>dl</title><a id=dl href="/report.csv" download>Report</a> <a id=exp href="/export">Export</a> <button id=b onclick="document.title='x'">Plain</button> <button id=js onclick="const a = document.createElement('a'); a.href = '/report.csv'; a.download = ''; document.body.append(a); a.click(); a.remove()">Script</button>`))
		}
	}))
	t.Cleanup(srv.Close)
	for _, mode := range []string{"host", "direct"} {
		t.Run(mode, func(t *testing.T) {
			e := newCLI(t)
			if mode == "direct" {
				e.Env = append(e.Env, "DTB_HOST=off")
			}
			stopBrowserAtEnd(t, e)
			e.Run(t, "open", srv.URL).Exit(t, 0)
			for _, c := range []struct{ sel, name, body string }{{"#dl", "report.csv", "a,b\n1,2\n"}, {"#exp", "export.json", `{"rows":3}`}, {"#js", "report.csv", "a,b\n1,2\n"}} {
				var res struct {
					Download struct {
						Path, SuggestedFilename, State string
						Bytes                          int64
					}
				}
				r := e.Run(t, "click", c.sel)
				r.Exit(t, 0)
				r.Decode(t, &res)
				d := res.Download
				if d.State != "completed" || d.SuggestedFilename != c.name || d.Bytes != int64(len(c.body)) {
					t.Fatalf("click %s: %s", c.sel, r)
				}
				b, err := os.ReadFile(d.Path)
				if err != nil || string(b) != c.body {
					t.Fatalf("saved %s: %q %v", d.Path, b, err)
				}
				if st, _ := os.Stat(d.Path); st.Mode().Perm() != 0o600 {
					t.Fatalf("mode %v", st.Mode())
				}
			}
			r := e.Run(t, "click", "#b", "--jq", `has("download")`)
			r.Exit(t, 0)
			if r.Stdout != "false\n" {
				t.Fatalf("a plain click reports a download: %s", r)
			}
			// A download link to another origin navigates instead (the
			// browser ignores download there): nothing is waited for.
			other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
			e.Run(t, "eval", "document.body.insertAdjacentHTML('beforeend', '<a id=xo download href=\""+other+"/page\">Elsewhere</a>'), 1").Exit(t, 0)
			start := time.Now()
			r = e.Run(t, "click", "#xo", "--jq", `[has("download"), .after.committed]`, "--compact")
			r.Exit(t, 0)
			if r.Stdout != "[false,true]\n" {
				t.Fatalf("a download link to another origin: %s", r)
			}
			if took := time.Since(start); took > 1500*time.Millisecond {
				t.Fatalf("the click on a download link that navigated took %v", took)
			}
		})
	}
}
