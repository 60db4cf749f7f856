package read

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// pageJS evaluates expr in the page and decodes its value: the page's own
// record of what the browser did, next to what dtb read.
func pageJS[T any](t *testing.T, p *cdp.Page, expr string) T {
	t.Helper()
	var v T
	raw, err := p.Evaluate(tctx(t), expr, false)
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("evaluate %s: %v (%s)", expr, err, raw)
	}
	return v
}

func readFixture(t *testing.T, path string, o Options) (*cdp.Page, *Result) {
	t.Helper()
	s := testSession(t, "")
	p := openTab(t, s, fixture(path))
	return p, mustRead(t, p, o)
}

// Issue 15.2: a script that writes markup in <head> closes it early; the metas
// after it are in <body>, and still the page's byline and title.
func TestMetadataFromTheWholeDocument(t *testing.T) {
	t.Parallel()
	p, res := readFixture(t, "read/fidelity/meta-in-body.html", Options{})
	if where := pageJS[string](t, p, `document.querySelector('meta[name=author]').parentElement.localName`); where != "body" {
		t.Fatalf("fixture: the author meta is in <%s>, not <body>", where)
	}
	r := res.Reader
	if r == nil {
		t.Fatalf("no reader view; warnings %q", res.Warnings)
	}
	if r.Byline != "Imogen Tarrant" {
		t.Errorf("reader byline %q, want the author meta in <body>", r.Byline)
	}
	if r.Title != "Harbour Lights Return to the Old Pier" {
		t.Errorf("reader title %q, want og:title", r.Title)
	}
	if !strings.Contains(r.Excerpt, "twenty years of darkness") {
		t.Errorf("reader excerpt %q", r.Excerpt)
	}
	if res.Title != "Coastal Courier | Harbour Lights Return to the Old Pier" {
		t.Errorf("title %q: the <title> in <body> is the document's title", res.Title)
	}
}

// Issue 15.3: formulas whose rendering is hidden from assistive tech (an
// aria-hidden fallback image, KaTeX's and MathJax's aria-hidden glyphs next to
// clipped MathML) keep their text once; other aria-hidden content stays out.
func TestMathFallbacksAreKept(t *testing.T) {
	t.Parallel()
	p, res := readFixture(t, "read/fidelity/math.html", Options{})
	if h := pageJS[bool](t, p, `getComputedStyle(document.querySelector('.mwe-math-mathml-inline')).display === 'none' && document.querySelector('.mwe-math-fallback-image-inline').getAttribute('aria-hidden') === 'true'`); !h {
		t.Fatal("fixture: the MediaWiki formula is not an aria-hidden image beside hidden MathML")
	}
	r := res.Reader
	if r == nil {
		t.Fatalf("no reader view; warnings %q", res.Warnings)
	}
	for name, s := range map[string]string{"text": res.Text, "reader.text": r.Text} {
		for _, want := range []string{`real because of {\displaystyle x^{2}} being`, "related by E=mc2 in", "given by x=r1 and"} {
			if !strings.Contains(collapse(s), want) {
				t.Errorf("%s lacks the formula in %q:\n%s", name, want, s)
			}
		}
		for _, gone := range []string{"GONE-", "VISUAL-COPY"} {
			if strings.Contains(s, gone) {
				t.Errorf("%s keeps aria-hidden content %q:\n%s", name, gone, s)
			}
		}
	}
	if !strings.Contains(r.Markdown, `![{\displaystyle x^{2}}](data:image/svg+xml`) {
		t.Errorf("reader markdown lacks the fallback image:\n%s", r.Markdown)
	}
}

// Issue 15.4: a highlighter's display:block spans inside <pre> stay spans
// (the reader keeps the code), and each ends its line.
func TestPreformattedBlocksStayInline(t *testing.T) {
	t.Parallel()
	p, res := readFixture(t, "read/fidelity/pre.html", Options{})
	if d := pageJS[string](t, p, `getComputedStyle(document.querySelector('pre .line')).display`); d != "block" {
		t.Fatalf("fixture: the code lines display %q", d)
	}
	r := res.Reader
	if r == nil {
		t.Fatalf("no reader view; warnings %q", res.Warnings)
	}
	// The empty line span is an empty block: no line on screen either.
	code := "package main\nfunc main() {\n\thttp.HandleFunc(\"/\", hello)\n\thttp.ListenAndServe(\":8080\", nil)\n}"
	for name, s := range map[string]string{"markdown": res.Markdown, "reader.markdown": r.Markdown} {
		// Readability drops classes, and with them the language of the block.
		if !strings.Contains(s, "\n"+code+"\n```") || !strings.Contains(res.Markdown, "```go\n"+code) {
			t.Errorf("%s lacks the code block:\n%s", name, s)
		}
		if !strings.Contains(s, "```\n$ go run .\nlistening on :8080\n```") {
			t.Errorf("%s lacks the shell block:\n%s", name, s)
		}
	}
	for name, s := range map[string]string{"text": res.Text, "reader.text": r.Text} {
		if !strings.Contains(s, code) {
			t.Errorf("%s lacks the code lines:\n%s", name, s)
		}
		if !strings.Contains(s, "First line of the lede, shown as a block.\nSecond line") {
			t.Errorf("%s: block spans outside <pre> are not on their own lines:\n%s", name, s)
		}
	}
	// (readability wraps the text around a div in paragraphs of its own, as it
	// does on the saved page: only the page text keeps the line.)
	if !strings.Contains(res.Text, "browser. An inline div stays") {
		t.Errorf("text: an inline div breaks the line:\n%s", res.Text)
	}
}

// Issue 15.5: an empty src does not point at the page, and lazy images
// (data-src, srcset only, <picture> sources, a <noscript> original) keep their
// pictures.
func TestImageSources(t *testing.T) {
	t.Parallel()
	p, res := readFixture(t, "read/fidelity/images.html", Options{})
	if cur := pageJS[string](t, p, `document.getElementById('srcset-only').currentSrc + document.querySelector('#picture img').currentSrc`); cur != "" {
		t.Fatalf("fixture: the lazy images below the fold loaded (%q)", cur)
	}
	r := res.Reader
	if r == nil {
		t.Fatalf("no reader view; warnings %q", res.Warnings)
	}
	img := fixture("read/fidelity/img/")
	for name, s := range map[string]string{"markdown": res.Markdown, "reader.markdown": r.Markdown} {
		for _, want := range []string{
			"![The first stile](" + img + "stile.png)",
			"![The headland](" + img + "headland-1200.png)",
			"![The cove](" + img + "cove-2x.webp)",
			"![The engine house](" + img + "engine-house.png)",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %s:\n%s", name, want, s)
			}
		}
		if strings.Contains(s, "]("+res.URL+")") {
			t.Errorf("%s has an image pointing at the page itself:\n%s", name, s)
		}
	}
}

// Issue 15.6: a page hidden as a whole by an anti-flicker style is read as if
// shown, with a warning; a page with no text has its requested keys, empty,
// and warnings saying so.
func TestHiddenOrEmptyPageSaysWhy(t *testing.T) {
	t.Parallel()
	t.Run("hidden", func(t *testing.T) {
		t.Parallel()
		p, res := readFixture(t, "read/fidelity/hidden-body.html", Options{Include: map[string]bool{"text": true, "reader": true}})
		if v := pageJS[string](t, p, `getComputedStyle(document.body).visibility + ' ' + getComputedStyle(document.documentElement).opacity`); v != "hidden 0" {
			t.Fatalf("fixture: body visibility, html opacity = %q", v)
		}
		if !strings.Contains(res.Text, "open every day from ten") || strings.Contains(res.Text, "GONE-") {
			t.Errorf("text:\n%s", res.Text)
		}
		if res.Reader == nil || !strings.Contains(res.Reader.Text, "Entry to the permanent collection") {
			t.Errorf("reader %+v; warnings %q", res.Reader, res.Warnings)
		}
		if !hasWarning(res.Warnings, "hidden as a whole (visibility:hidden on <body>, opacity:0 on <html>;") {
			t.Errorf("warnings %q", res.Warnings)
		}
	})
	t.Run("empty", func(t *testing.T) {
		t.Parallel()
		_, res := readFixture(t, "read/fidelity/blank.html", Options{Include: map[string]bool{"text": true, "reader": true, "markdown": true, "links": true}})
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"text": `""`, "markdown": `""`, "reader": "null", "links": "[]"} {
			got, ok := m[k]
			if gj, _ := json.Marshal(got); !ok || string(gj) != want {
				t.Errorf("%q = %s (present %v), want %s in %s", k, gj, ok, want, b)
			}
		}
		for _, k := range []string{"headings", "frames"} {
			if _, ok := m[k]; ok {
				t.Errorf("%q not requested but present in %s", k, b)
			}
		}
		for _, w := range []string{"text: the page shows no text", "reader: no main content"} {
			if !hasWarning(res.Warnings, w) {
				t.Errorf("warnings %q lack %q", res.Warnings, w)
			}
		}
	})
}

func hasWarning(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
