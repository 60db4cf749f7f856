package interact

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDrag: HTML5 drag and drop and mouse-based dragging (plain and with
// pointer capture) on the fixture; the page's own event log is the record.
func TestDrag(t *testing.T) {
	p, tab, ctx := open(t, "drag.html")

	res, err := p.Drag(ctx, css("#card1"), Locator{Label: "Bin", Nth: NoNth}, DragOptions{Settle: quick})
	if err != nil {
		t.Fatalf("html5 drag: %v", err)
	}
	if res.Facts["mode"] != "html5" {
		t.Errorf("mode %v", res.Facts["mode"])
	}
	ev := strings.Join(events(t, tab), "|")
	if !strings.Contains(ev, "dragstart card1|drop card1 on bin") {
		t.Errorf("the page saw %s", ev)
	}
	if got := eval(t, tab, "document.getElementById('card1').parentElement.id"); got != "bin" {
		t.Errorf("card1 is in %s", got)
	}

	// A zone that does not accept drops: the page saw the drag, not a drop.
	_, err = p.Drag(ctx, css("#card2"), css("#refuse"), DragOptions{Settle: quick})
	if reason(err) != "not-dropped" {
		t.Errorf("drop on a refusing zone: %v", err)
	}
	ev = strings.Join(events(t, tab), "|")
	if strings.Contains(ev, "drop on refuse") || !strings.Contains(ev, "dragstart card2") {
		t.Errorf("the page saw %s", ev)
	}

	// Mouse-based dragging: mousedown, moves, mouseup over the slot.
	res, err = p.Drag(ctx, css("#handle"), css("#slot"), DragOptions{Steps: 5, Settle: quick})
	if err != nil {
		t.Fatalf("mouse drag: %v", err)
	}
	if res.Facts["mode"] != "mouse" {
		t.Errorf("mode %v", res.Facts["mode"])
	}
	if last := lastEvent(t, tab); last != "slotted handle" {
		t.Errorf("the page saw %v", events(t, tab))
	}
	ev = strings.Join(events(t, tab), "|")
	if !strings.Contains(ev, "mouseup handle over slot after 6 moves") {
		t.Errorf("the page saw %s (want 6 moves: the nudge and 5 steps)", ev)
	}
	// Pointer capture sends pointerup to the dragged element, not the slot.
	if _, err := p.Drag(ctx, css("#captured"), css("#slot"), DragOptions{Settle: quick}); err != nil {
		t.Fatalf("captured drag: %v", err)
	}
	if last := lastEvent(t, tab); last != "slotted captured" {
		t.Errorf("the page saw %v", events(t, tab))
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := p.Drag(short, css("#nothing"), css("#slot"), DragOptions{}); reason(err) != "no-match" {
		t.Errorf("missing source: %v", err)
	}
}
