package commands

import (
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestInteractCLI runs the interaction commands as a user would: the real
// binary, a real headless Chromium, the fixtures of testdata/interact.
func TestInteractCLI(t *testing.T) {
	e := newCLI(t)

	// The upload guard answers before any browser is involved.
	t.Run("upload guard", func(t *testing.T) {
		e.Run(t, "upload", "--css", "input", "/home/u/.ssh/id_rsa").Fails(t, 6, "path-refused")
		e.Run(t, "upload", "--css", "input", "relative.txt").Fails(t, 6, "path-refused")
		many := []string{"upload", "--css", "input"}
		for i := 0; i < 21; i++ {
			many = append(many, "/tmp/a.txt")
		}
		e.Run(t, many...).Fails(t, 2, "too-many-files")
		e.Run(t, "click", "--css", "a", "--text", "b").Fails(t, 2, "usage")
		e.Run(t, "press", "Control+Bogus").Fails(t, 2, "usage")
		// Locator flags are checked before any browser, whatever the command,
		// and a qualifier without a locator kind is not silently dropped.
		for _, args := range [][]string{
			{"wait", "--name", "Save", "--no-launch"},
			{"wait", "--css", "a", "--text", "b", "--no-launch"},
			{"scroll", "--x", "1", "--no-launch"},
			{"scroll", "--within", "Lamp", "--dy", "100", "--no-launch"},
			{"type", "--name", "Email", "ada", "--no-launch"},
			{"press", "--nth", "1", "Enter", "--no-launch"},
			{"screenshot", "--name", "Save", "--no-launch"},
			{"screenshot", "--css", "a", "--text", "b", "--no-launch"},
			{"select", "red", "--no-launch"},
		} {
			e.Run(t, args...).Fails(t, 2, "usage")
		}
	})

	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	srv := interactServer(t, e)

	e.Run(t, "open", srv.URL+"/cards.html").Exit(t, 0)
	t.Run("inspect", func(t *testing.T) {
		r := e.Run(t, "inspect")
		r.Exit(t, 0)
		var doc struct {
			Count    int
			Elements []string
		}
		r.Decode(t, &doc)
		if doc.Count != 903 || !strings.Contains(strings.Join(doc.Elements, "\n"), "# Walnut Desk Lamp\ne4 link: Walnut Desk Lamp\ne5 spinbutton value=1: Qty\ne6 button: Add to cart") {
			t.Fatalf("inspect: %d %v", doc.Count, doc.Elements[:8])
		}
	})
	t.Run("click", func(t *testing.T) {
		r := e.Run(t, "click", "--role", "button", "--name", "Add to cart", "--within", "Walnut Desk Lamp", "--jq", ".element.name")
		r.Exit(t, 0)
		if strings.TrimSpace(r.Stdout) != `"Add to cart"` {
			t.Fatalf("click: %s", r.Stdout)
		}
		e.Run(t, "click", "--role", "button", "--name", "Add to cart").Fails(t, 7, "ambiguous-match")
		e.Run(t, "click", "#nothing", "--timeout", "1s").Fails(t, 3, "no-match")
		e.Run(t, "click", "@e6").Exit(t, 0)
		r = e.Run(t, "eval", "document.getElementById('count').textContent", "-r")
		if strings.Trim(strings.TrimSpace(r.Stdout), `"`) != "2" {
			t.Fatalf("two clicks on Walnut Desk Lamp's button, count %s", r.Stdout)
		}
	})
	// The page keeps what an inspect listed for its refs: a ref works from a
	// direct attach as through the host, either way round.
	t.Run("refs across connections", func(t *testing.T) {
		direct := []string{"DTB_HOST=off"}
		count := func() string {
			r := e.Run(t, "eval", "document.getElementById('count').textContent", "-r")
			return strings.Trim(strings.TrimSpace(r.Stdout), `"`)
		}
		before := count()
		e.RunWith(t, direct, "", "click", "@e6").Exit(t, 0)
		e.RunWith(t, direct, "", "inspect").Exit(t, 0)
		e.Run(t, "click", "@e6").Exit(t, 0)
		e.RunWith(t, direct, "", "click", "@e6").Exit(t, 0)
		if n, _ := strconv.Atoi(before); count() != strconv.Itoa(n+3) {
			t.Fatalf("three ref clicks from %s, count %s", before, count())
		}
	})
	t.Run("screenshot element", func(t *testing.T) {
		// No --format: the .png of --out asks for a PNG.
		out := filepath.Join(t.TempDir(), "button.png")
		e.Run(t, "screenshot", "--format", "jpeg", "--out", out).Fails(t, 2, "usage")
		r := e.Run(t, "screenshot", "--role", "button", "--name", "Add to cart", "--within", "Walnut Desk Lamp", "--padding", "4", "--out", out)
		r.Exit(t, 0)
		var doc struct {
			Width, Height int
			Mode          string
			Element       struct{ Box [4]int }
		}
		r.Decode(t, &doc)
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		// The image is the element's box plus the padding on each side.
		if doc.Mode != "clip" || b.Dx() != doc.Element.Box[2]+8 || b.Dy() != doc.Element.Box[3]+8 || b.Dx() != doc.Width {
			t.Fatalf("element capture %dx%d for box %v: %+v", b.Dx(), b.Dy(), doc.Element.Box, doc)
		}
		e.Run(t, "screenshot", "--role", "button", "--name", "Add to cart").Fails(t, 7, "ambiguous-match")
		e.Run(t, "screenshot", "--element", "#nothing", "--timeout", "1s").Fails(t, 3, "no-match")
		e.Run(t, "screenshot", "--element", "h1", "--full").Fails(t, 2, "usage")
	})
	t.Run("stale ref", func(t *testing.T) {
		e.Run(t, "eval", "location.reload(), 1").Exit(t, 0)
		e.Run(t, "wait", "--load", "--css", "button.add").Exit(t, 0)
		e.Run(t, "click", "@e6").Fails(t, 3, "stale-ref")
		e.Run(t, "click", "@e99999").Fails(t, 3, "no-such-ref")
	})
	t.Run("type press wait", func(t *testing.T) {
		e.Run(t, "type", "--placeholder", "Search products", "lamp").Exit(t, 0)
		e.Run(t, "press", "Control+a").Exit(t, 0)
		e.Run(t, "type", "desk").Exit(t, 0)
		e.Run(t, "wait", "--js", "document.querySelector('input[type=search]').value === 'desk'", "--load").Exit(t, 0)
		e.Run(t, "wait", "--css", "#never", "--timeout", "1s").Fails(t, 4, "timeout")
	})
	t.Run("covered", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/app.html").Exit(t, 0)
		e.Run(t, "eval", "(() => { const t = document.getElementById('cover-target'); t.style.position='fixed'; t.style.bottom='20px'; document.getElementById('consent').style.display='block'; return 1 })()").Exit(t, 0)
		e.Run(t, "click", "#cover-target").Fails(t, 1, "covered")
	})
	// The browser gets a private copy of each uploaded file (0700 folder under
	// the state dir); browser stop removes the copies.
	t.Run("upload copies", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/app.html").Exit(t, 0)
		f := filepath.Join(t.TempDir(), "report.txt")
		os.WriteFile(f, []byte("hello"), 0o644)
		e.Run(t, "upload", "--css", "#hiddenfile", f).Exit(t, 0)
		r := e.Run(t, "eval", "document.getElementById('hiddenfile').files[0].text()")
		if strings.TrimSpace(r.Stdout) != `"hello"` {
			t.Fatalf("the page read %s", r.Stdout)
		}
		uploads := filepath.Join(e.State, "uploads", "default")
		dirs, _ := filepath.Glob(filepath.Join(uploads, "upload-*"))
		if len(dirs) != 1 {
			t.Fatalf("staged folders: %v", dirs)
		}
		if st, err := os.Stat(dirs[0]); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("staged folder mode: %v %v", st, err)
		}
		e.Run(t, "browser", "stop").Exit(t, 0)
		if _, err := os.Stat(uploads); !os.IsNotExist(err) {
			t.Fatalf("browser stop left %s: %v", uploads, err)
		}
	})
}

// interactServer serves testdata/interact on 127.0.0.1 until the test ends,
// and then stops the default session's browser.
func interactServer(t *testing.T, e *browsertest.CLI) *httptest.Server {
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "interact"))))
	t.Cleanup(srv.Close)
	stopBrowserAtEnd(t, e)
	return srv
}
