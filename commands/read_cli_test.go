package commands

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestReadCLI runs `dtb extract` and `dtb search` as the real binary against a
// headless Chromium of its own session and fixture pages from testdata/ on
// 127.0.0.1 (results pages of every supported engine included).
func TestReadCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata"))))
	defer srv.Close()
	var launched struct{ PID int }
	r := e.Run(t, "browser", "launch")
	r.Exit(t, 0)
	r.Decode(t, &launched)
	t.Cleanup(func() {
		e.Run(t, "browser", "stop")
		browsertest.Kill(launched.PID)
	})

	type extractDoc struct {
		Title, URL, Text, Markdown string
		Reader                     *struct{ Title, Text string }
		Links                      []struct {
			Text, Href string
			SameSite   bool
		}
		Headings []struct {
			Level int
			Text  string
		}
		Frames []struct {
			ID, URL, Origin string
			Read            bool
		}
		Warnings  []string
		Readiness struct {
			Ms       int64
			TimedOut bool
			Basis    string
		}
		Tab    struct{ ID, Alias string }
		Status int
	}

	// A page that calls alert() and confirm() while it loads is read, not
	// waited on: the dialogs are dismissed (or answered by --dialog) and listed
	// in warnings; the page's own record says what confirm returned.
	t.Run("dialogs while loading", func(t *testing.T) {
		for _, c := range []struct {
			args   []string
			record string
			answer string
		}{
			{nil, "The cookie question returned false.", "dismiss"},
			{[]string{"--dialog", "accept"}, "The cookie question returned true.", "accept"},
		} {
			r := e.Run(t, append([]string{"extract", srv.URL + "/read/dialog-onload.html", "--include", "text"}, c.args...)...)
			r.Exit(t, 0)
			var d extractDoc
			r.Decode(t, &d)
			if !strings.Contains(d.Text, c.record) {
				t.Errorf("%v: text %q lacks %q", c.args, d.Text, c.record)
			}
			w := strings.Join(d.Warnings, "\n")
			if !strings.Contains(w, `alert dialog "Welcome to the shop!"`) || !strings.Contains(w, `confirm dialog "Accept the cookies?"`) || !strings.Contains(w, "dtb answered it: "+c.answer) {
				t.Errorf("%v: warnings %q", c.args, d.Warnings)
			}
		}
	})
	// An armed answer is spent on the first dialog: the read still
	// dismisses the ones after it instead of being blocked by them.
	t.Run("dialogs while loading, armed", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/read/frames.html").Exit(t, 0)
		e.Run(t, "dialog", "accept").Exit(t, 0)
		r := e.Run(t, "extract", srv.URL+"/read/dialog-onload.html", "--current", "--include", "text")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		if !strings.Contains(d.Text, "The cookie question returned false.") {
			t.Errorf("text %q", d.Text)
		}
		if w := strings.Join(d.Warnings, "\n"); !strings.Contains(w, `"Welcome to the shop!" while it was read; dtb answered it: accept`) || !strings.Contains(w, `"Accept the cookies?" while it was read; dtb answered it: dismiss`) {
			t.Errorf("warnings %q", d.Warnings)
		}
	})
	t.Run("extract a URL", func(t *testing.T) {
		r := e.Run(t, "extract", srv.URL+"/extract/article.html")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		if d.Reader == nil || !strings.Contains(d.Reader.Text, "minus tide") || strings.Contains(d.Reader.Text, "Kelp forests") {
			t.Fatalf("reader: %+v", d.Reader)
		}
		if d.Status != 200 || d.Tab.Alias == "" || len(d.Links) == 0 || len(d.Headings) == 0 || d.Markdown == "" {
			t.Fatalf("extract: %s", r.Stdout)
		}
		if d.Warnings == nil {
			t.Fatalf("warnings must be a list: %s", r.Stdout)
		}
	})
	t.Run("extract the current tab at once", func(t *testing.T) {
		r := e.Run(t, "extract", "--include", "headings")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		if d.Readiness.Basis != "history" || d.Readiness.Ms >= 800 {
			t.Fatalf("a tab read before must be ready at once: %+v", d.Readiness)
		}
		if len(d.Headings) == 0 || d.Text != "" || d.Reader != nil || d.Links != nil {
			t.Fatalf("--include headings: %s", r.Stdout)
		}
	})
	t.Run("include and max-chars", func(t *testing.T) {
		r := e.Run(t, "extract", "--include", "text,links", "--max-chars", "30", "--json-errors")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		if !strings.Contains(d.Text, "…[truncated ") || d.Markdown != "" || len(d.Links) == 0 {
			t.Fatalf("extract: %s", r.Stdout)
		}
		if !strings.Contains(r.Stderr, `"warning":"truncated"`) {
			t.Fatalf("no truncation warning on stderr: %q", r.Stderr)
		}
		e.Run(t, "extract", "--include", "text,nope").Fails(t, 2, "usage")
		e.Run(t, "extract", "--max-chars", "-1").Fails(t, 2, "usage")
	})
	t.Run("frames", func(t *testing.T) {
		r := e.Run(t, "extract", srv.URL+"/read/frames.html", "--include", "text,frames")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		read := map[string]bool{}
		for _, f := range d.Frames {
			read[f.ID] = f.Read
		}
		if !read["f1"] || !read["f2"] || !read["f2.1"] || !read["f3"] || !strings.Contains(d.Text, "Cross-origin frame text.") {
			t.Fatalf("frames: %s", r.Stdout)
		}
	})
	t.Run("never quiet: warning, not failure", func(t *testing.T) {
		r := e.Run(t, "extract", srv.URL+"/read/busy.html", "--ready-timeout", "1s", "--include", "text")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		if !d.Readiness.TimedOut || len(d.Warnings) == 0 || !strings.Contains(d.Text, "never goes quiet") {
			t.Fatalf("extract: %s", r.Stdout)
		}
		if !strings.Contains(r.Stderr, `"warning":"not-ready"`) {
			t.Fatalf("stderr: %q", r.Stderr)
		}
	})
	t.Run("wait condition that never holds", func(t *testing.T) {
		r := e.Run(t, "extract", srv.URL+"/read/quiet.html", "--wait-css", "#never", "--ready-timeout", "1s")
		r.Fails(t, 4, "timeout")
		e.Run(t, "extract", "--wait-text", "nowhere to be seen", "--ready-timeout", "500ms").Fails(t, 4, "timeout")
		e.Run(t, "extract", "--wait-css", "a[[", "--ready-timeout", "500ms").Fails(t, 2, "usage")
	})
	t.Run("wait condition that holds", func(t *testing.T) {
		r := e.Run(t, "extract", srv.URL+"/read/late.html", "--wait-css", "#results li", "-r", "--jq", ".text")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, "Result two") {
			t.Fatalf("text: %q", r.Stdout)
		}
	})

	type searchDoc struct {
		Query, Engine, URL string
		Hits               []struct {
			Rank                      int
			Title, URL, Snippet, Kind string
		}
		Count     int
		Workspace string
		Incognito bool
		Tab       struct{ ID, Alias string }
	}
	t.Run("search every engine", func(t *testing.T) {
		for _, engine := range []string{"duckduckgo", "bing", "google", "brave"} {
			r := e.Run(t, "search", "golang", "html", "parser", "--engine", srv.URL+"/extract/search/"+engine+".html?q=%s")
			r.Exit(t, 0)
			var d searchDoc
			r.Decode(t, &d)
			kinds := map[string]int{}
			for i, h := range d.Hits {
				kinds[h.Kind]++
				if h.Rank != i+1 || h.Title == "" || !strings.HasPrefix(h.URL, "http") {
					t.Errorf("%s: hit %+v", engine, h)
				}
			}
			if d.Engine != engine || d.Query != "golang html parser" || d.Count != len(d.Hits) || kinds["organic"] == 0 {
				t.Errorf("%s: %s", engine, r.Stdout)
			}
			if !strings.Contains(d.URL, "q=golang+html+parser") {
				t.Errorf("%s: results URL %s", engine, d.URL)
			}
			if d.Workspace != "search" || !d.Incognito {
				t.Errorf("%s: search must default to the incognito search workspace: %s", engine, r.Stdout)
			}
		}
	})
	t.Run("search options", func(t *testing.T) {
		r := e.RunWith(t, []string{"DTB_SEARCH_ENGINE=" + srv.URL + "/extract/search/bing.html?q=%s"}, "", "search", "x", "--incognito=false", "--workspace", "research", "--limit", "2")
		r.Exit(t, 0)
		var d searchDoc
		r.Decode(t, &d)
		if d.Engine != "bing" || d.Incognito || d.Workspace != "research" || len(d.Hits) != 2 {
			t.Fatalf("search: %s", r.Stdout)
		}
		r = e.Run(t, "search", "x", "--engine", srv.URL+"/extract/search/bing-noresults.html?q=%s")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, `"hits":[]`) {
			t.Fatalf("no results must be an empty list: %s", r.Stdout)
		}
		r = e.Run(t, "search", "x", "--engine", srv.URL+"/extract/search/google-consent.html?q=%s")
		doc := r.Fails(t, 1, "unsupported-results-page")
		if doc["engine"] != "google" || doc["found"] == nil || doc["url"] == nil {
			t.Fatalf("error document: %s", r.Stderr)
		}
		e.Run(t, "search", "x", "--engine", srv.URL+"/read/quiet.html?q=%s").Fails(t, 1, "unsupported-results-page")
		e.Run(t, "search", "x", "--engine", srv.URL+"/read/quiet.html?q=%s", "--parser", "duckduckgo").Fails(t, 1, "unsupported-results-page")
		e.Run(t, "search", "x", "--engine", "altavista").Fails(t, 2, "usage")
		e.Run(t, "search", "--engine", "bing").Fails(t, 2, "usage")
	})
	// Last: it changes the current tab.
	t.Run("a tab dtb opened is tracked from its first node", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/read/quiet.html").Exit(t, 0)
		// Once the quiet period has passed, the first read knows it from the
		// tracker that came with the open ("history"); without it the read would
		// have to fall back on load evidence ("load") or a fresh watch.
		time.Sleep(time.Second)
		r := e.Run(t, "extract", "--include", "headings")
		r.Exit(t, 0)
		var d extractDoc
		r.Decode(t, &d)
		if d.Readiness.Basis != "history" {
			t.Fatalf("after open, readiness %+v, want history", d.Readiness)
		}
	})
}
