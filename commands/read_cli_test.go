package commands

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadCLI runs `dtb extract` and `dtb search` as the real binary against a
// headless Chromium of its own session and fixture pages from testdata/ on
// 127.0.0.1 (results pages of every supported engine included).
func TestReadCLI(t *testing.T) {
	if _, err := exec.LookPath("chromium-headless-shell"); err != nil {
		if _, err2 := exec.LookPath("chromium"); err2 != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true and no Chromium on the PATH")
			}
			t.Skip("no Chromium installed")
		}
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dtb")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/dtb").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata"))))
	defer srv.Close()
	e := &cliEnv{t: t, bin: bin, state: filepath.Join(tmp, "state"), cache: filepath.Join(tmp, "cache")}
	var launched struct{ PID int }
	r := e.run(t, "browser", "launch")
	r.exit(t, 0)
	r.decode(t, &launched)
	t.Cleanup(func() {
		e.run(t, "browser", "stop")
		syscall.Kill(-launched.PID, syscall.SIGKILL)
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

	t.Run("extract a URL", func(t *testing.T) {
		r := e.run(t, "extract", srv.URL+"/extract/article.html")
		r.exit(t, 0)
		var d extractDoc
		r.decode(t, &d)
		if d.Reader == nil || !strings.Contains(d.Reader.Text, "minus tide") || strings.Contains(d.Reader.Text, "Kelp forests") {
			t.Fatalf("reader: %+v", d.Reader)
		}
		if d.Status != 200 || d.Tab.Alias == "" || len(d.Links) == 0 || len(d.Headings) == 0 || d.Markdown == "" {
			t.Fatalf("extract: %s", r.stdout)
		}
		if d.Warnings == nil {
			t.Fatalf("warnings must be a list: %s", r.stdout)
		}
	})
	t.Run("extract the current tab at once", func(t *testing.T) {
		r := e.run(t, "extract", "--include", "headings")
		r.exit(t, 0)
		var d extractDoc
		r.decode(t, &d)
		if d.Readiness.Basis != "history" || d.Readiness.Ms >= 800 {
			t.Fatalf("a tab read before must be ready at once: %+v", d.Readiness)
		}
		if len(d.Headings) == 0 || d.Text != "" || d.Reader != nil || d.Links != nil {
			t.Fatalf("--include headings: %s", r.stdout)
		}
	})
	t.Run("include and max-chars", func(t *testing.T) {
		r := e.run(t, "extract", "--include", "text,links", "--max-chars", "30", "--json-errors")
		r.exit(t, 0)
		var d extractDoc
		r.decode(t, &d)
		if !strings.Contains(d.Text, "…[truncated ") || d.Markdown != "" || len(d.Links) == 0 {
			t.Fatalf("extract: %s", r.stdout)
		}
		if !strings.Contains(r.stderr, `"warning":"truncated"`) {
			t.Fatalf("no truncation warning on stderr: %q", r.stderr)
		}
		e.run(t, "extract", "--include", "text,nope").fails(t, 2, "usage")
		e.run(t, "extract", "--max-chars", "-1").fails(t, 2, "usage")
	})
	t.Run("frames", func(t *testing.T) {
		r := e.run(t, "extract", srv.URL+"/read/frames.html", "--include", "text,frames")
		r.exit(t, 0)
		var d extractDoc
		r.decode(t, &d)
		read := map[string]bool{}
		for _, f := range d.Frames {
			read[f.ID] = f.Read
		}
		if !read["f1"] || !read["f2"] || !read["f2.1"] || !read["f3"] || !strings.Contains(d.Text, "Cross-origin frame text.") {
			t.Fatalf("frames: %s", r.stdout)
		}
	})
	t.Run("never quiet: warning, not failure", func(t *testing.T) {
		r := e.run(t, "extract", srv.URL+"/read/busy.html", "--ready-timeout", "1s", "--include", "text")
		r.exit(t, 0)
		var d extractDoc
		r.decode(t, &d)
		if !d.Readiness.TimedOut || len(d.Warnings) == 0 || !strings.Contains(d.Text, "never goes quiet") {
			t.Fatalf("extract: %s", r.stdout)
		}
		if !strings.Contains(r.stderr, `"warning":"not-ready"`) {
			t.Fatalf("stderr: %q", r.stderr)
		}
	})
	t.Run("wait condition that never holds", func(t *testing.T) {
		r := e.run(t, "extract", srv.URL+"/read/quiet.html", "--wait-css", "#never", "--ready-timeout", "1s")
		r.fails(t, 4, "timeout")
		e.run(t, "extract", "--wait-text", "nowhere to be seen", "--ready-timeout", "500ms").fails(t, 4, "timeout")
		e.run(t, "extract", "--wait-css", "a[[", "--ready-timeout", "500ms").fails(t, 2, "usage")
	})
	t.Run("wait condition that holds", func(t *testing.T) {
		r := e.run(t, "extract", srv.URL+"/read/late.html", "--wait-css", "#results li", "-r", "--jq", ".text")
		r.exit(t, 0)
		if !strings.Contains(r.stdout, "Result two") {
			t.Fatalf("text: %q", r.stdout)
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
			r := e.run(t, "search", "golang", "html", "parser", "--engine", srv.URL+"/extract/search/"+engine+".html?q=%s")
			r.exit(t, 0)
			var d searchDoc
			r.decode(t, &d)
			kinds := map[string]int{}
			for i, h := range d.Hits {
				kinds[h.Kind]++
				if h.Rank != i+1 || h.Title == "" || !strings.HasPrefix(h.URL, "http") {
					t.Errorf("%s: hit %+v", engine, h)
				}
			}
			if d.Engine != engine || d.Query != "golang html parser" || d.Count != len(d.Hits) || kinds["organic"] == 0 {
				t.Errorf("%s: %s", engine, r.stdout)
			}
			if !strings.Contains(d.URL, "q=golang+html+parser") {
				t.Errorf("%s: results URL %s", engine, d.URL)
			}
			if d.Workspace != "search" || !d.Incognito {
				t.Errorf("%s: search must default to the incognito search workspace: %s", engine, r.stdout)
			}
		}
	})
	t.Run("search options", func(t *testing.T) {
		r := e.runEnv(t, []string{"DTB_SEARCH_ENGINE=" + srv.URL + "/extract/search/bing.html?q=%s"}, "search", "x", "--incognito=false", "--workspace", "research", "--limit", "2")
		r.exit(t, 0)
		var d searchDoc
		r.decode(t, &d)
		if d.Engine != "bing" || d.Incognito || d.Workspace != "research" || len(d.Hits) != 2 {
			t.Fatalf("search: %s", r.stdout)
		}
		r = e.run(t, "search", "x", "--engine", srv.URL+"/extract/search/bing-noresults.html?q=%s")
		r.exit(t, 0)
		if !strings.Contains(r.stdout, `"hits":[]`) {
			t.Fatalf("no results must be an empty list: %s", r.stdout)
		}
		r = e.run(t, "search", "x", "--engine", srv.URL+"/extract/search/google-consent.html?q=%s")
		r.fails(t, 1, "unsupported-results-page")
		var doc map[string]any
		json.Unmarshal([]byte(lastLine(r.stderr)), &doc)
		if doc["engine"] != "google" || doc["found"] == nil || doc["url"] == nil {
			t.Fatalf("error document: %s", r.stderr)
		}
		e.run(t, "search", "x", "--engine", srv.URL+"/read/quiet.html?q=%s").fails(t, 1, "unsupported-results-page")
		e.run(t, "search", "x", "--engine", srv.URL+"/read/quiet.html?q=%s", "--parser", "duckduckgo").fails(t, 1, "unsupported-results-page")
		e.run(t, "search", "x", "--engine", "altavista").fails(t, 2, "usage")
		e.run(t, "search", "--engine", "bing").fails(t, 2, "usage")
	})
	// Last: it changes the current tab.
	t.Run("a tab dtb opened is tracked from its first node", func(t *testing.T) {
		e.run(t, "open", srv.URL+"/read/quiet.html").exit(t, 0)
		// Once the quiet period has passed, the first read knows it from the
		// tracker that came with the open ("history"); without it the read would
		// have to fall back on load evidence ("load") or a fresh watch.
		time.Sleep(time.Second)
		r := e.run(t, "extract", "--include", "headings")
		r.exit(t, 0)
		var d extractDoc
		r.decode(t, &d)
		if d.Readiness.Basis != "history" {
			t.Fatalf("after open, readiness %+v, want history", d.Readiness)
		}
	})
}

func (e *cliEnv) runEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(append(cleanEnv(), "DTB_STATE_DIR="+e.state, "DTB_CACHE_DIR="+e.cache, "DTB_TIMEOUT=60s"), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{args: args, stdout: out.String(), stderr: errb.String(), code: code}
}
