package interact

import (
	"strings"
	"testing"
)

// The default settle ends early only when the page is demonstrably idle: the
// click's effect is in the page when Click returns, whether it is synchronous,
// spread over animation frames, behind a slow fetch (far past the old 50 ms
// quiet window), behind two chained fetches, or a navigation.
func TestSettleSeesTheEffect(t *testing.T) {
	p, tab, ctx := open(t, "settle.html")
	for _, c := range []struct{ button, want string }{
		{"#sync", "sync"},
		{"#frames", "frame 5"},
		{"#fetch", "loaded done"},
		{"#chain", "chained done"},
		{"#double", "double"},
		{"#tasks", "tasks"},
		{"#timers", "timers"},
		{"#tasksframe", "tasks, then a frame"},
	} {
		r, err := p.Click(ctx, css(c.button), ClickOptions{Settle: DefaultSettle})
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
