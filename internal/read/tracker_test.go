package read

import (
	"strconv"
	"testing"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
)

// The tracker is a new-document script: added again on a connection that
// has it (the session host keeps a tab's connection between commands), it
// would run once more in every later document, one copy per command. The
// browser numbers a connection's new-document scripts in order, so a probe
// added after AddTracker shows whether it added another.
func TestTrackerIsAddedOncePerConnection(t *testing.T) {
	ctx := tctx(t)
	p := openTab(t, testSession(t, ""), fixture("pages/index.html"))
	probe := func() int {
		t.Helper()
		r, err := proto.Call(ctx, p, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: "void 0"})
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(string(r.Identifier))
		if err != nil {
			t.Fatalf("script identifier %q is not a number", r.Identifier)
		}
		return n
	}
	for i := 0; i < 2; i++ {
		if err := AddTracker(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	first := probe()
	for i := 0; i < 3; i++ {
		if err := AddTracker(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if next := probe(); next != first+1 {
		t.Fatalf("the connection gained %d new-document scripts across three more AddTracker calls, want none", next-first-1)
	}
}
