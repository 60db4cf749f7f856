package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestScreenshotAnnotateCLI: screenshot --annotate draws inspect's refs on
// the image, lists them, saves them so that click @eN acts on what the image
// shows, and leaves nothing in the page.
func TestScreenshotAnnotateCLI(t *testing.T) {
	e := newCLI(t)
	e.Run(t, "screenshot", "--annotate", "--clip", "0,0,10,10", "--no-launch").Fails(t, 2, "usage")
	e.Run(t, "screenshot", "--annotate", "--element", "h1", "--no-launch").Fails(t, 2, "usage")

	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	srv := interactServer(t, e)
	e.Run(t, "open", srv.URL+"/annotate.html").Exit(t, 0)

	dir := t.TempDir()
	plain, marked := filepath.Join(dir, "plain.png"), filepath.Join(dir, "marked.png")
	e.Run(t, "screenshot", "--format", "png", "--out", plain).Exit(t, 0)
	r := e.Run(t, "screenshot", "--annotate", "--format", "png", "--out", marked)
	r.Exit(t, 0)
	var doc struct {
		Mode        string
		Annotations []struct {
			Ref, Role, Name string
			Box             [4]int
		}
	}
	r.Decode(t, &doc)
	var got []string
	for _, a := range doc.Annotations {
		got = append(got, a.Ref+" "+a.Role+" "+a.Name)
	}
	if want := "e1 button Save, e2 link Details, e3 textbox Email"; strings.Join(got, ", ") != want || doc.Mode != "viewport" {
		t.Fatalf("annotations %q (mode %s), want %q", got, doc.Mode, want)
	}
	a, errA := os.ReadFile(plain)
	b, errB := os.ReadFile(marked)
	if errA != nil || errB != nil || bytes.Equal(a, b) {
		t.Fatalf("the annotated image is the plain one (%v %v)", errA, errB)
	}
	if r := e.Run(t, "eval", "document.querySelectorAll('dtb-annotations').length", "-r"); strings.TrimSpace(r.Stdout) != "0" {
		t.Fatalf("overlay left in the page: %s", r.Stdout)
	}
	// The refs drawn are the session's: click the one labelled Save.
	e.Run(t, "click", "@e1").Exit(t, 0)
	if r := e.Run(t, "eval", "window.clicked", "-r"); strings.TrimSpace(r.Stdout) != "1" {
		t.Fatalf("click @e1 did not click Save: %s", r.Stdout)
	}
	// The whole page: the element below the fold too, in document coordinates.
	r = e.Run(t, "screenshot", "--annotate", "--full")
	r.Exit(t, 0)
	r.Decode(t, &doc)
	if n := len(doc.Annotations); doc.Mode != "full" || n != 4 || doc.Annotations[3].Name != "Far below" || doc.Annotations[3].Box[1] < 1600 {
		t.Fatalf("full page annotations (mode %s): %+v", doc.Mode, doc.Annotations)
	}
	e.Run(t, "click", "@e4").Exit(t, 0)
	// Nothing to draw is an empty list, not a missing one.
	e.Run(t, "eval", "document.body.textContent = '', 1").Exit(t, 0)
	if r := e.Run(t, "screenshot", "--annotate", "--jq", ".annotations"); strings.TrimSpace(r.Stdout) != "[]" {
		t.Fatalf("annotations of an empty page: %s", r.Stdout)
	}
}
