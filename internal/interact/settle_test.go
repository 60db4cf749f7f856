package interact

import (
	"strings"
	"testing"
	"time"
)

// The default settle ends early only when the page is demonstrably idle: the
// click's effect is in the page when Click returns, whether it is synchronous,
// spread over animation frames, behind a slow fetch (far past the old 50 ms
// quiet window), behind two chained fetches, or a navigation.
func TestSettleSeesTheEffect(t *testing.T) {
	p, tab, ctx := open(t, "settle.html")
	// The task chains are about the frame ends' idle check, not the quiet
	// window: on a loaded machine their 12 and 30 ms of work can outlast
	// the default 50 ms, so they get a wider window (their frame ends are
	// the default's).
	chains := DefaultSettle
	chains.Quiet = 400 * time.Millisecond
	for _, c := range []struct {
		button, want string
		settle       Settle
	}{
		{"#sync", "sync", DefaultSettle},
		{"#frames", "frame 5", DefaultSettle},
		{"#fetch", "loaded done", DefaultSettle},
		{"#chain", "chained done", DefaultSettle},
		{"#double", "double", DefaultSettle},
		{"#tasks", "tasks", chains},
		{"#timers", "timers", DefaultSettle},
		{"#tasksframe", "tasks, then a frame", chains},
	} {
		r, err := p.Click(ctx, css(c.button), ClickOptions{Settle: c.settle})
		if err != nil {
			t.Fatalf("%s: %v", c.button, err)
		}
		if got := eval(t, tab, "document.getElementById('out').textContent"); got != c.want {
			t.Fatalf("%s: when the click returned the page showed %q, want %q (after %+v)", c.button, got, c.want, r.After)
		}
		if !r.After.Quiet || r.After.Navigated {
			t.Fatalf("%s: after = %+v", c.button, r.After)
		}
	}
	r, err := p.Click(ctx, css("#nav"), ClickOptions{Settle: DefaultSettle})
	if err != nil || !r.After.Navigated || !r.After.Committed || !strings.HasSuffix(r.After.URL, "/next.html") {
		t.Fatalf("navigation: %v %+v", err, r.After)
	}
	if got := eval(t, tab, "location.pathname"); got != "/next.html" {
		t.Fatalf("the page is at %q", got)
	}
}
