package commands

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// settlePage: buttons whose effects come after the click's input, each its
// own way: over the next five animation frames, at the end of a chain of
// tasks, after a request, by a navigation.
const settlePage = `<!doctype html><title>settle</title>
<button id=frames>Frames</button> <button id=tasks>Tasks</button>
<button id=fetch>Fetch</button> <a id=nav href="/next">Next</a>
<button id=vanish>Vanish</button>
<p id=out>idle</p>
<script>
const out = document.getElementById('out');
document.getElementById('frames').onclick = () => {
  let n = 0;
  const step = () => { n++; out.textContent = 'frame ' + n; if (n < 5) requestAnimationFrame(step); };
  requestAnimationFrame(step);
};
document.getElementById('tasks').onclick = () => {
  const ch = new MessageChannel();
  let n = 0;
  ch.port1.onmessage = () => {
    const end = performance.now() + 3;
    while (performance.now() < end) {}
    if (++n < 10) ch.port2.postMessage(0); else out.textContent = 'tasks done';
  };
  ch.port2.postMessage(0);
};
document.getElementById('fetch').onclick = () => {
  out.textContent = 'loading';
  fetch('/slow').then(r => r.text()).then(t => { out.textContent = 'loaded ' + t; });
};
// Gone at the press: the release makes no click.
document.getElementById('vanish').onmousedown = (e) => { e.target.remove(); out.textContent = 'vanished'; };
</script>`

// TestHostSettleGoesOnAfterTheAnswer: through the session host an action
// answers once it is known to have started no navigation and no request,
// and the page's follow-up work is waited for before the next command on the
// tab runs; an action that starts a request or a navigation is waited for as
// before. A direct attach waits for everything before it answers.
func TestHostSettleGoesOnAfterTheAnswer(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/slow":
			time.Sleep(300 * time.Millisecond)
			w.Write([]byte("done"))
		case "/next":
			w.Write([]byte("<!doctype html><title>next</title><p>next page"))
		default:
			w.Write([]byte(settlePage))
		}
	}))
	t.Cleanup(srv.Close)
	e := newCLI(t)
	stopBrowserAtEnd(t, e)
	e.Run(t, "open", srv.URL).Exit(t, 0)

	type after struct {
		Navigated, Committed, Quiet, Settling bool
		URL                                   string
	}
	click := func(env []string, sel string) after {
		t.Helper()
		r := e.RunWith(t, env, "", "click", sel)
		r.Exit(t, 0)
		var res struct{ After after }
		r.Decode(t, &res)
		return res.After
	}
	out := func(env []string) string {
		t.Helper()
		return strings.TrimSpace(e.RunWith(t, env, "", "eval", "document.getElementById('out').textContent", "-r").Stdout)
	}
	for _, c := range []struct{ sel, want string }{{"#frames", "frame 5"}, {"#tasks", "tasks done"}} {
		for _, host := range []bool{true, false} {
			var env []string
			if !host {
				env = []string{"DTB_HOST=off"}
			}
			e.RunWith(t, env, "", "eval", "document.getElementById('out').textContent = 'idle'").Exit(t, 0)
			a := click(env, c.sel)
			if a.Navigated || a.Settling != host || a.Quiet == host {
				t.Fatalf("click %s (host %v): after %+v", c.sel, host, a)
			}
			// The next command on the tab sees the end of what the click
			// started, whichever way the click answered.
			if got := out(env); got != c.want {
				t.Fatalf("click %s (host %v): the next command saw %q, want %q", c.sel, host, got, c.want)
			}
		}
	}
	// A request the click started is waited for before it answers.
	if a := click(nil, "#fetch"); a.Settling || !a.Quiet {
		t.Fatalf("click #fetch: after %+v", a)
	}
	if got := out([]string{"DTB_HOST=off"}); got != "loaded done" {
		t.Fatalf("after the click that fetched, the page showed %q", got)
	}
	// A press that makes no click (its button goes at the press) still
	// answers, at once.
	start := time.Now()
	if a := click(nil, "#vanish"); a.Navigated {
		t.Fatalf("click #vanish: after %+v", a)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("click #vanish took %v", d)
	}
	if got := out(nil); got != "vanished" {
		t.Fatalf("after the press, the page showed %q", got)
	}
	// So is a navigation: the answer names the new page.
	if a := click(nil, "#nav"); a.Settling || !a.Navigated || !a.Committed || !strings.HasSuffix(a.URL, "/next") {
		t.Fatalf("click #nav: after %+v", a)
	}
}

// TestHostFileChooser: through the session host, whose connection keeps
// file-chooser interception on between commands, every click that opens a
// chooser reports it, the upload that follows answers it, and a direct attach
// next to the host still sees its own click's chooser.
func TestHostFileChooser(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := interactServer(t, e)
	e.Run(t, "open", srv.URL+"/dialogs.html").Exit(t, 0)
	type chooserDoc struct {
		FileChooser *struct{ Multiple bool }
	}
	for i, env := range [][]string{nil, nil, {"DTB_HOST=off"}, nil} {
		var doc chooserDoc
		r := e.RunWith(t, env, "", "click", "#avatar")
		r.Exit(t, 0)
		r.Decode(t, &doc)
		if doc.FileChooser == nil {
			t.Fatalf("click %d (%v) reports no file chooser: %s", i, env, r)
		}
	}
	uploadAnswersChooser(t, e)
}

// TestHostClickSeesWhatItsScrollBrings: a click that scrolls its element
// into view checks the point after the scroll's own effects (a scroll
// handler runs with the next frame) even when the tab's frames were quiet:
// here a layer the scroll shows over the page, which the click must report
// instead of clicking into it.
func TestHostClickSeesWhatItsScrollBrings(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	srv := interactServer(t, e)
	e.Run(t, "open", srv.URL+"/actionable.html").Exit(t, 0)
	for i := 0; i < 3; i++ {
		e.Run(t, "eval", "document.getElementById('scrollcover').style.display = 'none', window.events = [], scrollTo(0, 0), 1").Exit(t, 0)
		e.Run(t, "click", "#slider").Exit(t, 0) // the tab's frames known and quiet
		e.Run(t, "eval", "window.events = [], coverOnScroll(), 1").Exit(t, 0)
		r := e.Run(t, "click", "#under-sticky", "--timeout", "3s")
		events := strings.TrimSpace(e.Run(t, "eval", "JSON.stringify(window.events)", "-r").Stdout)
		if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "covered") {
			t.Fatalf("try %d: a click whose scroll brought a cover: %s (the page recorded %s)", i, r, events)
		}
		if events != "[]" {
			t.Fatalf("try %d: the page recorded %s", i, events)
		}
	}
}
