package interact

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// layoutJS is the page's layout as the test compares it: the document's size
// and the box of every element of the body.
const layoutJS = `JSON.stringify([document.documentElement.scrollWidth, document.documentElement.scrollHeight,
  Array.from(document.body.querySelectorAll('*')).map(e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })])`

const overlayJS = `document.querySelectorAll('dtb-annotations').length`

func TestAnnotate(t *testing.T) {
	p, tab, ctx := open(t, "annotate.html")
	before := eval(t, tab, layoutJS)
	for _, full := range []bool{false, true} {
		var during, present string
		ann, err := p.Annotate(ctx, full, func(ctx context.Context) error {
			during, present = eval(t, tab, layoutJS), eval(t, tab, overlayJS)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The overlay is there for the capture, and the page's layout does
		// not move under it (the fixture's rules target html's last child).
		if present != "1" || during != before {
			t.Fatalf("full=%v: overlay %s, layout %s, before %s", full, present, during, before)
		}
		if n := eval(t, tab, overlayJS); n != "0" {
			t.Fatalf("full=%v: %s overlays left", full, n)
		}
		var refs []string
		for _, a := range ann.Annotations {
			refs = append(refs, a.Ref+" "+a.Role+" "+a.Name)
			it := ann.Inspection.Items[refIndex(a.Ref)]
			if it.Ref != a.Ref || it.Hidden {
				t.Fatalf("annotation %v is not inspect's %v", a, it)
			}
		}
		got := strings.Join(refs, ", ")
		want := "e1 button Save, e2 link Details, e3 textbox Email"
		if full {
			want += ", e4 button Far below"
		}
		if got != want {
			t.Fatalf("full=%v: annotations %q, want %q", full, got, want)
		}
		if full && ann.Annotations[3].Box[1] < 1600 {
			t.Fatalf("full page: far button's box %v is not in document coordinates", ann.Annotations[3].Box)
		}
	}

	// Scrolled: the viewport shows only the far button, the whole page still
	// has every box where the document has it.
	eval(t, tab, "window.scrollTo(0, 1400), window.scrollY")
	for _, full := range []bool{false, true} {
		ann, err := p.Annotate(ctx, full, func(context.Context) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		last := ann.Annotations[len(ann.Annotations)-1]
		if n := len(ann.Annotations); last.Name != "Far below" || (full && (n != 4 || last.Box[1] < 1600 || ann.Annotations[0].Box[1] > 200)) || (!full && (n != 1 || last.Box[1] > 1000)) {
			t.Fatalf("scrolled, full=%v: %+v", full, ann.Annotations)
		}
	}

	// A capture that fails, or whose context ends, still removes the overlay.
	boom := errors.New("capture failed")
	if _, err := p.Annotate(ctx, false, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed capture: %v", err)
	}
	if n := eval(t, tab, overlayJS); n != "0" {
		t.Fatalf("failed capture left %s overlays", n)
	}
	cctx, cancel := context.WithCancel(ctx)
	_, err := p.Annotate(cctx, false, func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	if err == nil {
		t.Fatal("cancelled capture succeeded")
	}
	if n := eval(t, tab, overlayJS); n != "0" {
		t.Fatalf("cancelled capture left %s overlays", n)
	}
}
