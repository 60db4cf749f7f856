package read

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func mustRead(t *testing.T, p *cdp.Page, o Options) *Result {
	t.Helper()
	res, err := Read(tctx(t), p, o, nil)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return res
}

func reasonOf(err error) string {
	var e *output.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func TestArticleReaderKeepsArticle(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, fixture("extract/article.html"))
	res := mustRead(t, p, Options{})
	r := res.Reader
	if r == nil {
		t.Fatalf("no reader view; warnings %q", res.Warnings)
	}
	for _, want := range []string{"richest", "minus tide", "Ochre sea stars", "tripods are not allowed"} {
		if !strings.Contains(r.Text, want) || !strings.Contains(r.Markdown, want) {
			t.Errorf("reader lacks article content %q", want)
		}
	}
	for _, chrome := range []string{"Kelp forests", "Privacy", "© 2025"} {
		if strings.Contains(r.Text, chrome) {
			t.Errorf("reader keeps page chrome %q", chrome)
		}
		if !strings.Contains(res.Text, chrome) {
			t.Errorf("page text lacks visible %q", chrome)
		}
	}
	if r.Title != "Tide Pools of the Northern Coast" || r.Byline != "Mara Lindqvist" {
		t.Errorf("reader title %q byline %q", r.Title, r.Byline)
	}
	if res.Title == "" || !strings.HasSuffix(res.URL, "/extract/article.html") {
		t.Errorf("title %q url %q", res.Title, res.URL)
	}
	if len(res.Headings) == 0 || res.Headings[0].Level != 1 {
		t.Errorf("headings %+v", res.Headings)
	}
	var same, external int
	for _, l := range res.Links {
		if !strings.Contains(l.Href, "://") && !strings.HasPrefix(l.Href, "mailto:") {
			t.Errorf("link %+v is not absolute", l)
		}
		if l.SameSite {
			same++
		} else {
			external++
		}
	}
	if same == 0 {
		t.Errorf("no same-site link among %+v", res.Links)
	}
	if res.Markdown == "" || !strings.Contains(res.Markdown, "# ") {
		t.Errorf("markdown: %q", res.Markdown)
	}
}

func TestShadowDOMAndHiddenContent(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, fixture("read/shadow.html"))
	snap, err := Take(tctx(t), p, SnapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap.HTML, "GONE-") || strings.Contains(snap.HTML, "CLOSED-SHADOW") {
		t.Errorf("hidden content serialised:\n%s", snap.HTML)
	}
	if !strings.Contains(snap.HTML, `value="typed value"`) {
		t.Errorf("the input's current value is missing:\n%s", snap.HTML)
	}
	res := mustRead(t, p, Options{})
	for _, want := range []string{
		"Plain visible paragraph.", "Slotted card title", "Shadow paragraph text.", "Nested shadow note",
		"Light default content", "Fallback slot content", "Visible inside hidden", "Summary stays",
		"Open details body", "Chosen option", "Typed text",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, res.Text)
		}
	}
	// The slotted title renders inside the shadow <h2>: it is a heading.
	found := false
	for _, h := range res.Headings {
		found = found || (h.Level == 2 && h.Text == "Slotted card title")
	}
	if !found {
		t.Errorf("headings %+v lack the slotted shadow h2", res.Headings)
	}
	// Flat-tree order: the shadow tree's content, slots resolved in place.
	order := []string{"Slotted card title", "Shadow paragraph text.", "Nested shadow note", "Light default content", "Fallback slot content"}
	last := -1
	for _, w := range order {
		i := strings.Index(res.Text, w)
		if i < last {
			t.Errorf("%q out of rendering order in:\n%s", w, res.Text)
		}
		last = i
	}
}

func TestFrames(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"headless-shell", "chromium"} {
		t.Run(kind, func(t *testing.T) {
			s := testSession(t, kind)
			p := openTab(t, s, fixture("read/frames.html"))
			ctx := tctx(t)
			if kind == "chromium" {
				// With site isolation the localhost frame lives in another process:
				// it is missing from the page's own frame tree.
				tree, err := p.FrameTree(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range tree.ChildFrames {
					if strings.Contains(c.Frame.URL, "localhost") {
						t.Fatalf("the cross-origin frame is in-process; this run does not test OOPIFs")
					}
				}
			}
			res := mustRead(t, p, Options{})
			byID := map[string]Frame{}
			for _, f := range res.Frames {
				byID[f.ID] = f
			}
			want := map[string]string{
				"f1":   fixtureBase,
				"f2":   strings.Replace(fixtureBase, "127.0.0.1", "localhost", 1),
				"f2.1": strings.Replace(fixtureBase, "127.0.0.1", "localhost", 1),
				"f3":   fixtureBase,
			}
			for id, origin := range want {
				f, ok := byID[id]
				if !ok || !f.Read || f.Origin != origin {
					t.Errorf("frame %s: %+v (ok %v), want read with origin %s", id, f, ok, origin)
				}
			}
			for _, f := range res.Frames {
				if len(f.FrameID) != 32 {
					t.Errorf("frame %s has no browser frame id: %+v", f.ID, f)
				}
			}
			if byID["f2"].FrameID == byID["f1"].FrameID {
				t.Errorf("frame ids not distinct: %+v", res.Frames)
			}
			if len(res.Frames) != len(want) {
				t.Errorf("frames %+v: the zero-size frame must not be listed", res.Frames)
			}
			for _, w := range []string{"Top document text.", "Same-origin frame text.", "Cross-origin frame text.", "Nested frame text inside the cross-origin frame.", "Srcdoc frame text."} {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, res.Text)
				}
			}
			if strings.Contains(res.Text, "GONE-IN-CROSS") {
				t.Error("a hidden element of the cross-origin frame was read")
			}
			if !strings.Contains(res.Markdown, "Cross-origin frame heading") {
				t.Errorf("markdown lacks the cross-origin frame:\n%s", res.Markdown)
			}
			if len(res.Warnings) != 0 {
				t.Errorf("warnings: %q", res.Warnings)
			}
			if res.Timing.ReadMs > 1000 {
				t.Errorf("reading frames took %d ms", res.Timing.ReadMs)
			}
			only := mustRead(t, p, Options{Include: map[string]bool{"frames": true}})
			if len(only.Frames) != len(want) || only.Text != "" {
				t.Errorf("--include frames: %+v", only.Result)
			}
			// A second read on the same connection finds the frames again.
			again := mustRead(t, p, Options{Include: map[string]bool{"text": true}})
			if !strings.Contains(again.Text, "Cross-origin frame text.") {
				t.Errorf("second read lost the cross-origin frame:\n%s", again.Text)
			}
		})
	}
}

func TestNeverQuietPageIsReadWithAWarning(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, fixture("read/busy.html"))
	var warned []string
	start := time.Now()
	res, err := Read(tctx(t), p, Options{Ready: ReadyOptions{Timeout: 1500 * time.Millisecond}}, func(reason, msg string, _ map[string]any) {
		warned = append(warned, reason+": "+msg)
	})
	if err != nil {
		t.Fatalf("a readiness timeout without a condition must not fail: %v", err)
	}
	took := time.Since(start)
	if !res.Readiness.TimedOut || res.Readiness.Basis != "" || !res.Readiness.Loaded {
		t.Errorf("readiness %+v", res.Readiness)
	}
	if took < 1400*time.Millisecond || took > 4*time.Second {
		t.Errorf("took %s for a 1.5 s window", took)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "readiness") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if len(warned) == 0 || !strings.HasPrefix(warned[0], "not-ready") {
		t.Errorf("warn callback: %q", warned)
	}
	if !strings.Contains(res.Text, "A page that never goes quiet") {
		t.Errorf("text: %q", res.Text)
	}
}

func TestStillLoadingStretchesTheWindow(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	ctx := tctx(t)
	opened, err := s.OpenURL(ctx, session.OpenOptions{URL: fixture("__loading__"), Wait: cdp.WaitNone})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Page(ctx, session.TabSelector{Tab: opened.Tab.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	rd, err := WaitReady(ctx, p, ReadyOptions{Timeout: 500 * time.Millisecond, Stretch: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if !rd.TimedOut || rd.Loaded {
		t.Errorf("readiness %+v", rd)
	}
	if took < 1400*time.Millisecond || took > 3*time.Second {
		t.Errorf("a page still loading must stretch the 0.5 s window to 1.5 s; took %s", took)
	}
	if !strings.Contains(rd.Warning(), "did not finish loading") {
		t.Errorf("warning %q", rd.Warning())
	}
}

func TestWaitConditions(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	t.Run("never holds", func(t *testing.T) {
		p := openTab(t, s, fixture("read/quiet.html"))
		start := time.Now()
		_, err := Read(tctx(t), p, Options{Ready: ReadyOptions{Timeout: time.Second, Conditions: Conditions{CSS: "#never"}}}, nil)
		if reasonOf(err) != "timeout" {
			t.Fatalf("err = %v, want a timeout", err)
		}
		var e *output.Error
		errors.As(err, &e)
		if e.ExitCode() != output.ExitTimeout || e.Details["conditions"] == nil {
			t.Errorf("error %+v", e)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("took %s", took)
		}
	})
	t.Run("holds later", func(t *testing.T) {
		p := openTab(t, s, fixture("read/late.html"))
		res := mustRead(t, p, Options{Ready: ReadyOptions{Conditions: Conditions{CSS: "#results li", Text: "Result two", URL: "late.html"}}})
		if !strings.Contains(res.Text, "Result one") || res.Readiness.TimedOut {
			t.Errorf("text %q readiness %+v", res.Text, res.Readiness)
		}
		for _, k := range []string{"css", "text", "url"} {
			if !res.Readiness.Conditions[k] {
				t.Errorf("condition %s not reported as held: %+v", k, res.Readiness.Conditions)
			}
		}
	})
	t.Run("text in a shadow root and a frame", func(t *testing.T) {
		p := openTab(t, s, fixture("read/shadow.html"))
		res := mustRead(t, p, Options{Ready: ReadyOptions{Timeout: 2 * time.Second, Conditions: Conditions{Text: "Nested  shadow\nnote"}}})
		if res.Readiness.TimedOut || !res.Readiness.Conditions["text"] {
			t.Errorf("readiness %+v", res.Readiness)
		}
		p = openTab(t, s, fixture("read/frames.html"))
		res = mustRead(t, p, Options{Ready: ReadyOptions{Timeout: 2 * time.Second, Conditions: Conditions{Text: "Same-origin frame text."}}})
		if res.Readiness.TimedOut {
			t.Errorf("readiness %+v", res.Readiness)
		}
	})
	t.Run("bad selector", func(t *testing.T) {
		p := openTab(t, s, fixture("read/quiet.html"))
		_, err := Read(tctx(t), p, Options{Ready: ReadyOptions{Conditions: Conditions{CSS: "a[["}}}, nil)
		if reasonOf(err) != "usage" {
			t.Fatalf("err = %v, want usage", err)
		}
	})
}

// A tab dtb read before is known to be quiet: the next read waits for nothing.
func TestQuietTabIsReadAtOnce(t *testing.T) {
	s := testSession(t, "")
	p := openTab(t, s, fixture("read/quiet.html"))
	mustRead(t, p, Options{Include: map[string]bool{"headings": true}})
	p.Close()
	// A fresh connection, as the next dtb command makes.
	p2, err := s.Page(tctx(t), session.TabSelector{Tab: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	res := mustRead(t, p2, Options{})
	// The tracker's history proves quiet at once: no fresh quiet period is waited.
	// (Wall-clock speed is in scripts/bench, not asserted here.)
	if res.Readiness.Basis != "history" || res.Readiness.Ms >= int64(DefaultQuiet/time.Millisecond) || res.Readiness.TimedOut {
		t.Errorf("readiness %+v, want history in well under the 800 ms quiet period", res.Readiness)
	}
}

// A tab dtb never touched (no tracker): loaded long ago and quiet while
// probed briefly is ready, without waiting for the full quiet period.
func TestUntrackedSettledTabIsReadFast(t *testing.T) {
	s := testSession(t, "")
	ctx := tctx(t)
	opened, err := s.OpenURL(ctx, session.OpenOptions{URL: fixture("read/quiet.html"), Wait: cdp.WaitLoad})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(DefaultQuiet + 100*time.Millisecond)
	p, err := s.Page(ctx, session.TabSelector{Tab: opened.Tab.ID})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res := mustRead(t, p, Options{Include: map[string]bool{"text": true}})
	if res.Readiness.Basis != "load" || res.Readiness.Ms >= int64(DefaultQuiet/time.Millisecond) {
		t.Errorf("readiness %+v, want load evidence after a short probe", res.Readiness)
	}
	// A page that keeps changing is waited out: readiness comes only once the
	// DOM has been unchanged for the quiet period after its last change.
	p.Evaluate(ctx, `(() => { let n = 0; const change = () => { document.body.append('late change'); window.__lastChange = performance.now(); if (++n >= 12) clearInterval(i); }; const i = setInterval(change, 50); change(); })()`, false)
	if _, err := WaitReady(ctx, p, ReadyOptions{Quiet: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	raw, err := p.Evaluate(ctx, `[window.__lastChange ? performance.now() - window.__lastChange : -1, document.body.textContent.split('late change').length - 1]`, false)
	if err != nil {
		t.Fatal(err)
	}
	var since []float64
	if err := json.Unmarshal(raw, &since); err != nil {
		t.Fatal(err)
	}
	if since[1] < 12 {
		t.Errorf("ready while the page was still changing (%v of 12 changes made)", since[1])
	} else if since[0] >= 0 && since[0] < 290 {
		t.Errorf("ready only %.0f ms after the last change, want the 300 ms quiet period", since[0])
	}
}

func TestIncludeAndMaxChars(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, fixture("extract/article.html"))
	res := mustRead(t, p, Options{Include: map[string]bool{"links": true, "title": true}})
	if len(res.Links) == 0 || res.Text != "" || res.Reader != nil || res.Markdown != "" || res.Headings != nil || res.Frames != nil {
		t.Errorf("--include links computed more: %+v", res.Result)
	}
	b, _ := json.Marshal(res)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	for _, k := range []string{"title", "url", "warnings", "readiness", "links"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("key %s missing from %s", k, b)
		}
	}
	for _, k := range []string{"text", "markdown", "reader", "headings"} {
		if _, ok := doc[k]; ok {
			t.Errorf("key %s present in %s", k, b)
		}
	}
	res = mustRead(t, p, Options{MaxChars: 40, Include: map[string]bool{"text": true, "markdown": true}})
	if !strings.Contains(res.Text, "…[truncated ") || !strings.Contains(res.Markdown, "…[truncated ") {
		t.Errorf("not truncated: %q / %q", res.Text, res.Markdown)
	}
	if n := len([]rune(strings.Split(res.Text, "…[truncated")[0])); n != 40 {
		t.Errorf("kept %d chars, want 40", n)
	}
	truncs := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "truncated") {
			truncs++
		}
	}
	if truncs != 2 {
		t.Errorf("warnings %q", res.Warnings)
	}
	if _, err := ParseInclude("text,bogus"); reasonOf(err) != "usage" {
		t.Errorf("unknown field: %v", err)
	}
}

// The page-side code never evaluates page text: a page whose content looks like
// code is read as text.
func TestPageTextIsData(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, "data:text/html,"+strings.ReplaceAll(`<title>");throw 1;//</title><p>`+"`${alert(1)}`"+` </script><script>x</p>`, "#", "%23"))
	res := mustRead(t, p, Options{Ready: ReadyOptions{Quiet: -1}})
	if res.Title != `");throw 1;//` || !strings.Contains(res.Text, "${alert(1)}") {
		t.Errorf("title %q text %q", res.Title, res.Text)
	}
}

// The tracker goes into documents the tab loads while dtb is connected from
// their first node (early), and into the current document at once.
func TestTrackerFollowsNavigation(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, fixture("read/quiet.html"))
	ctx := tctx(t)
	if err := Track(ctx, p); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		raw, err := p.Evaluate(ctx, `(() => { const t = window[Symbol.for('dtb.quiet')]; return location.pathname + ' ' + document.readyState + ' ' + (t ? (t.early ? 'early' : 'late') : 'none'); })()`, false)
		if err != nil {
			return err.Error()
		}
		var s string
		json.Unmarshal(raw, &s)
		return s
	}
	if got := state(); got != "/read/quiet.html complete late" {
		t.Fatalf("after Track: %q", got)
	}
	if _, err := p.Evaluate(ctx, `location.href = "/read/late.html"`, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	got := ""
	for time.Now().Before(deadline) {
		if got = state(); strings.HasPrefix(got, "/read/late.html complete") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != "/read/late.html complete early" {
		t.Fatalf("after navigating: %q", got)
	}
	// The early tracker saw the late content arrive: readiness waits for it.
	rd, err := WaitReady(ctx, p, ReadyOptions{Quiet: 300 * time.Millisecond, Conditions: Conditions{CSS: "#results"}})
	if err != nil || rd.Basis == "" {
		t.Fatalf("readiness %+v, %v", rd, err)
	}
}

// Changes inside a shadow root count as DOM changes: readiness waits for them.
func TestShadowRootChangesDelayReadiness(t *testing.T) {
	t.Parallel()
	s := testSession(t, "")
	p := openTab(t, s, fixture("read/shadow-late.html"))
	res := mustRead(t, p, Options{Ready: ReadyOptions{Quiet: 300 * time.Millisecond}, Include: map[string]bool{"text": true}})
	if !strings.Contains(res.Text, "Feed complete") {
		t.Errorf("read before the shadow root changed: %q (readiness %+v)", res.Text, res.Readiness)
	}
}
