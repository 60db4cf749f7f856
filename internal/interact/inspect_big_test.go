package interact

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// On a flat page of thousands of headings and controls, every control's
// context is the heading before it and every labelled input has its label
// as its name (the context and the labels are found in one pass, issue 23.3).
func TestInspectFlatPage(t *testing.T) {
	p, tab, ctx := open(t, "big.html?flat=1&n=3000")
	if n := eval(t, tab, "String(window.nodes)"); n != "2707" {
		t.Fatalf("fixture: %s elements", n)
	}
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ins.Items) != 900 {
		t.Fatalf("%d items, want 900 (3 per card)", len(ins.Items))
	}
	for i, it := range ins.Items {
		card := i / 3
		want := fmt.Sprintf("Item %d", card)
		if it.Ctx != want {
			t.Fatalf("item %d (%s %q): ctx %q, want %q", i, it.Role, it.Name, it.Ctx, want)
		}
		if it.Role == "textbox" && it.Name != fmt.Sprintf("Qty %d", card) {
			t.Fatalf("item %d: name %q, want its label", i, it.Name)
		}
	}
}

// An inspect that runs out of time stops in the page too: the tab answers
// the next command at once instead of after the walk (issue 23.3).
func TestInspectStopsAtItsDeadline(t *testing.T) {
	p, tab, _ := open(t, "big.html?flat=1&n=150000")
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := p.Inspect(short, InspectOptions{}); reason(err) != "timeout" {
		t.Fatalf("inspect of 150k elements in 300 ms: %v, want timeout", err)
	}
	// The page-side walk of 150k elements takes seconds; stopped at the
	// deadline, the page is free well within this one.
	next, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel2()
	if _, err := tab.Evaluate(next, "1", false); err != nil {
		t.Fatalf("the tab is still busy after the inspect gave up: %v", err)
	}
}
