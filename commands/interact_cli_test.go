package commands

import (
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractCLI runs the interaction commands as a user would: the real
// binary, a real headless Chromium, the fixtures of testdata/interact.
func TestInteractCLI(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dtb")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/dtb").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	e := &cliEnv{t: t, bin: bin, state: filepath.Join(tmp, "state"), cache: filepath.Join(tmp, "cache")}

	// The upload guard answers before any browser is involved.
	t.Run("upload guard", func(t *testing.T) {
		e.run(t, "upload", "--css", "input", "/home/u/.ssh/id_rsa").fails(t, 6, "path-refused")
		e.run(t, "upload", "--css", "input", "relative.txt").fails(t, 6, "path-refused")
		many := []string{"upload", "--css", "input"}
		for i := 0; i < 21; i++ {
			many = append(many, "/tmp/a.txt")
		}
		e.run(t, many...).fails(t, 2, "too-many-files")
		e.run(t, "click", "--css", "a", "--text", "b").fails(t, 2, "usage")
		e.run(t, "press", "Control+Bogus").fails(t, 2, "usage")
	})

	if _, err := exec.LookPath("chromium-headless-shell"); err != nil {
		if _, err2 := exec.LookPath("chromium"); err2 != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true and no Chromium on the PATH")
			}
			t.Skip("no Chromium installed")
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "interact"))))
	defer srv.Close()
	defer e.run(t, "browser", "stop")

	e.run(t, "open", srv.URL+"/cards.html").exit(t, 0)
	t.Run("inspect", func(t *testing.T) {
		r := e.run(t, "inspect")
		r.exit(t, 0)
		var doc struct {
			Count    int
			Elements []string
		}
		r.decode(t, &doc)
		if doc.Count != 903 || !strings.Contains(strings.Join(doc.Elements, "\n"), "# Walnut Desk Lamp\ne4 link: Walnut Desk Lamp\ne5 spinbutton value=1: Qty\ne6 button: Add to cart") {
			t.Fatalf("inspect: %d %v", doc.Count, doc.Elements[:8])
		}
	})
	t.Run("click", func(t *testing.T) {
		r := e.run(t, "click", "--role", "button", "--name", "Add to cart", "--within", "Walnut Desk Lamp", "--jq", ".element.name")
		r.exit(t, 0)
		if strings.TrimSpace(r.stdout) != `"Add to cart"` {
			t.Fatalf("click: %s", r.stdout)
		}
		e.run(t, "click", "--role", "button", "--name", "Add to cart").fails(t, 7, "ambiguous-match")
		e.run(t, "click", "#nothing", "--timeout", "1s").fails(t, 3, "no-match")
		e.run(t, "click", "@e6").exit(t, 0)
		r = e.run(t, "eval", "document.getElementById('count').textContent", "-r")
		if strings.Trim(strings.TrimSpace(r.stdout), `"`) != "2" {
			t.Fatalf("two clicks on Walnut Desk Lamp's button, count %s", r.stdout)
		}
	})
	t.Run("screenshot element", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "button.png")
		r := e.run(t, "screenshot", "--role", "button", "--name", "Add to cart", "--within", "Walnut Desk Lamp", "--format", "png", "--padding", "4", "--out", out)
		r.exit(t, 0)
		var doc struct {
			Width, Height int
			Mode          string
			Element       struct{ Box [4]int }
		}
		r.decode(t, &doc)
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
		e.run(t, "screenshot", "--role", "button", "--name", "Add to cart").fails(t, 7, "ambiguous-match")
		e.run(t, "screenshot", "--element", "#nothing", "--timeout", "1s").fails(t, 3, "no-match")
		e.run(t, "screenshot", "--element", "h1", "--full").fails(t, 2, "usage")
	})
	t.Run("stale ref", func(t *testing.T) {
		e.run(t, "eval", "location.reload(), 1").exit(t, 0)
		e.run(t, "wait", "--load", "--css", "button.add").exit(t, 0)
		e.run(t, "click", "@e6").fails(t, 3, "stale-ref")
		e.run(t, "click", "@e99999").fails(t, 3, "no-such-ref")
	})
	t.Run("type press wait", func(t *testing.T) {
		e.run(t, "type", "--placeholder", "Search products", "lamp").exit(t, 0)
		e.run(t, "press", "Control+a").exit(t, 0)
		e.run(t, "type", "desk").exit(t, 0)
		e.run(t, "wait", "--js", "document.querySelector('input[type=search]').value === 'desk'", "--load").exit(t, 0)
		e.run(t, "wait", "--css", "#never", "--timeout", "1s").fails(t, 4, "timeout")
	})
	t.Run("covered", func(t *testing.T) {
		e.run(t, "open", srv.URL+"/app.html").exit(t, 0)
		e.run(t, "eval", "(() => { const t = document.getElementById('cover-target'); t.style.position='fixed'; t.style.bottom='20px'; document.getElementById('consent').style.display='block'; return 1 })()").exit(t, 0)
		e.run(t, "click", "#cover-target").fails(t, 1, "covered")
	})
}
