package extract

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "extract", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const articleURL = "https://coastal-notes.example/guides/north/tide-pools.html"

func extractFixture(t *testing.T, name, pageURL string, opts Options) *Result {
	t.Helper()
	res, err := Extract(Input{URL: pageURL, HTML: fixture(t, name)}, opts)
	if err != nil {
		t.Fatalf("Extract(%s): %v", name, err)
	}
	return res
}

func TestArticleReaderKeepsArticleDropsChrome(t *testing.T) {
	res := extractFixture(t, "article.html", articleURL, Options{})
	r := res.Reader
	if r == nil {
		t.Fatalf("Reader is nil; warnings %q", res.Warnings)
	}
	if r.Title != "Tide Pools of the Northern Coast" {
		t.Errorf("Reader.Title = %q", r.Title)
	}
	if r.Byline != "Mara Lindqvist" {
		t.Errorf("Reader.Byline = %q", r.Byline)
	}
	if r.Excerpt == "" {
		t.Error("Reader.Excerpt is empty")
	}
	if r.Length != utf8.RuneCountInString(r.Text) {
		t.Errorf("Reader.Length = %d, text has %d chars", r.Length, utf8.RuneCountInString(r.Text))
	}
	for _, field := range []struct{ name, s string }{{"reader.text", r.Text}, {"reader.markdown", r.Markdown}} {
		for _, want := range []string{"richest", "minus tide", "Ochre sea stars", "Gull Point", "tripods are not allowed"} {
			if !strings.Contains(field.s, want) {
				t.Errorf("%s lacks article content %q", field.name, want)
			}
		}
		// Navigation, sidebar and footer belong to the page, not the article.
		for _, chrome := range []string{"Guides", "Shop", "Kelp forests", "Related", "Privacy", "© 2025"} {
			if strings.Contains(field.s, chrome) {
				t.Errorf("%s keeps page chrome %q", field.name, chrome)
			}
		}
	}
	if !strings.Contains(r.Markdown, "[tide table](https://coastal-notes.example/guides/north/tides.html)") {
		t.Errorf("reader markdown link not absolute:\n%s", r.Markdown)
	}
	// The whole-page fields do keep the chrome: it is visible.
	for _, want := range []string{"Guides", "Kelp forests", "© 2025 Coastal Notes"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("Text lacks visible %q", want)
		}
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("Markdown lacks visible %q", want)
		}
	}
}

func TestHiddenAndNonRenderedContentAbsent(t *testing.T) {
	leaks := []string{"STYLE-LEAK", "SCRIPT-LEAK", "HIDDEN-INLINE-STYLE", "HIDDEN-ATTRIBUTE",
		"NOSCRIPT-LEAK", "TEMPLATE-LEAK", "HIDDEN-VISIBILITY", "HIDDEN-INPUT", "typed-value-not-text",
		"FRAME-FALLBACK-LEAK", "PAY-SCRIPT-LEAK", "window.analytics", "color: red"}
	for _, tc := range []struct{ name, url string }{
		{"article.html", articleURL},
		{"misc.html", "https://www.example.org/start"},
		{"frames.html", "https://shop.example.com/checkout/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{URL: tc.url, HTML: fixture(t, tc.name)}
			if tc.name == "frames.html" {
				in.Frames = checkoutFrames(t)
			}
			res, err := Extract(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			fields := map[string]string{"text": res.Text, "markdown": res.Markdown}
			if res.Reader != nil {
				fields["reader.text"] = res.Reader.Text
				fields["reader.markdown"] = res.Reader.Markdown
			}
			for _, l := range res.Links {
				fields["links"] += l.Text + "\n"
			}
			for _, h := range res.Headings {
				fields["headings"] += h.Text + "\n"
			}
			for name, s := range fields {
				for _, leak := range leaks {
					if strings.Contains(s, leak) {
						t.Errorf("%s contains %q", name, leak)
					}
				}
			}
		})
	}
}

func TestArticleLinksAndHeadings(t *testing.T) {
	res := extractFixture(t, "article.html", articleURL, Options{})
	wantLinks := []Link{
		{"Coastal Notes home", "https://coastal-notes.example/", true}, // image link: alt text
		{"Home", "https://coastal-notes.example/", true},
		{"Guides", "https://coastal-notes.example/guides/", true},
		{"About", "https://coastal-notes.example/guides/about.html", true}, // ../about.html
		{"Shop", "https://shop.coastal-notes.example/", true},              // same registrable domain
		// javascript:void(0) and "#" are dropped.
		{"tide table", "https://coastal-notes.example/guides/north/tides.html", true},
		{"safety notes", "https://coastal-notes.example/guides/safety", true},
		{"park rules", "https://parks.example.gov/rules?lang=en&page=2", false},
		{"the ranger office", "mailto:ranger@parks.example.gov", false},
		// the second "tide table" link is a duplicate pair and is dropped.
		{"Back to timing", "https://coastal-notes.example/guides/north/tide-pools.html#when", true},
		{"Kelp forests", "https://coastal-notes.example/guides/kelp-forests", true},
		{"Dunes", "https://coastal-notes.example/guides/dunes", true},
		{"Privacy", "https://coastal-notes.example/privacy", true},
		{"Twitter", "https://twitter.example.com/coastalnotes", false},
	}
	if !reflect.DeepEqual(res.Links, wantLinks) {
		t.Errorf("Links:\n got %+v\nwant %+v", res.Links, wantLinks)
	}
	wantHeadings := []Heading{
		{1, "Tide Pools of the Northern Coast"},
		{2, "When to go"},
		{2, "What you will find"},
		{3, "Site comparison"}, // role=heading aria-level=3
		{3, "Related"},
	}
	if !reflect.DeepEqual(res.Headings, wantHeadings) {
		t.Errorf("Headings:\n got %+v\nwant %+v", res.Headings, wantHeadings)
	}
	if res.Title != "Tide Pools of the Northern Coast | Coastal Notes" {
		t.Errorf("Title from <title> = %q", res.Title)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("Warnings = %q", res.Warnings)
	}
}

func TestArticleTextLayout(t *testing.T) {
	res := extractFixture(t, "article.html", articleURL, Options{Include: map[string]bool{FieldText: true}})
	for _, want := range []string{
		"Home\nGuides\nAbout\nShop\nMenu\nTop\n\nTide Pools of the Northern Coast\n\nBy Mara Lindqvist\n\nThe northern coast",
		"See the tide table and the safety notes.\n\nWhat you will find\n\nGiant green anemones, which close when touched\nOchre sea stars",
		"Hermit crabs\ntrading shells\n\nSite comparison\n\nSite\tAccess\tBest tide\nSeal Rock\tEasy\t-1.0 ft\n",
		"low   06:12  -1.1 ft\nhigh  12:40   6.8 ft\n\nPhotographs",
		"Related\n\nKelp forests Dunes\n",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("Text lacks %q\n--- text ---\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "\n\n\n") || strings.Contains(res.Text, "  the") {
		t.Errorf("Text has uncollapsed whitespace:\n%s", res.Text)
	}
}

func TestTextRendering(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		{"inline joined without space", `<p>Word<b>joined</b> and <i>spaced</i>   out</p>`, "Wordjoined and spaced out"},
		{"adjacent links apart", `<div><a href="/a">One</a><a href="/b">Two</a><button>Three</button></div>`, "One Two Three"},
		{"link then punctuation", `<p>See <a href="/a">this</a>.</p>`, "See this."},
		{"paragraphs and blocks", `<p>a</p><p>b</p><div>c</div><div>d</div>`, "a\n\nb\n\nc\nd"},
		{"br and double br", `<p>one<br>two<br><br><br>three</p>`, "one\ntwo\n\nthree"},
		{"list items", `<ul><li>x</li><li>y <span>z</span></li></ul>`, "x\ny z"},
		{"table rows and cells", `<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>`, "h1\th2\na\tb"},
		{"pre keeps spaces", "<p>x</p><pre>a  b\n  c</pre><p>y</p>", "x\n\na  b\n  c\n\ny"},
		{"nbsp collapses", "<p>a&nbsp;&nbsp; b</p>", "a b"},
		{"select shows selection", `<p>Size: <select><option>S</option><option selected>L</option></select></p>`, "Size: L"},
		{"submit value", `<form><input type="submit" value="Send"><input type="text" value="secret"></form>`, "Send"},
		{"declarative shadow root", `<x-a><template shadowrootmode="open"><p>in shadow</p></template></x-a><template><p>inert</p></template>`, "in shadow"},
		{"script style noscript", `<p>a<script>s()</script><style>p{}</style><noscript>n</noscript>b</p>`, "ab"},
		{"hidden attribute and style", `<p>a</p><p hidden>h</p><p style="DISPLAY : none !important">d</p><p>b</p>`, "a\n\nb"},
		{"role heading breaks", `<span>a</span><span role="heading">H</span><span>b</span>`, "a\n\nH\n\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Extract(Input{URL: "https://example.com/", HTML: tc.html}, Options{Include: map[string]bool{FieldText: true}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tc.want {
				t.Errorf("Text = %q, want %q", res.Text, tc.want)
			}
		})
	}
}

func TestMiscLinksHeadingsAndBase(t *testing.T) {
	res := extractFixture(t, "misc.html", "https://www.example.org/start", Options{})
	wantLinks := []Link{
		// <base href> wins over the page URL.
		{"Intro", "https://cdn.example.org/docs/v2/intro", true},
		{"API", "https://cdn.example.org/docs/v2/api", true},
		{"GitHub", "https://cdn.example.org/icons/github", true}, // svg <title>
		{"North area", "https://cdn.example.org/docs/v2/north.html", true},
		{"Protocol relative", "https://other.example.org/x", true}, // title attribute
		{"Call", "tel:+15551234", false},
		{"API", "https://cdn.example.org/docs/v2/API", true}, // same text, other href: kept
	}
	if !reflect.DeepEqual(res.Links, wantLinks) {
		t.Errorf("Links:\n got %+v\nwant %+v", res.Links, wantLinks)
	}
	wantHeadings := []Heading{{5, "Overridden level"}, {4, "Spaced heading"}, {3, "Nested heading text"}}
	if !reflect.DeepEqual(res.Headings, wantHeadings) {
		t.Errorf("Headings = %+v, want %+v", res.Headings, wantHeadings)
	}
	if res.Title != "Misc page" {
		t.Errorf("Title = %q", res.Title)
	}
	for _, want := range []string{
		"[Intro](https://cdn.example.org/docs/v2/intro) [API](https://cdn.example.org/docs/v2/api) Sign\u00a0in",
		"##### Overridden level",
		"Choose: Large",
		"Shadow content",
		"[GitHub](https://cdn.example.org/icons/github)",
	} {
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, res.Markdown)
		}
	}
	if strings.Contains(res.Markdown, "\n\n\n") {
		t.Errorf("Markdown has runs of blank lines:\n%s", res.Markdown)
	}
	if strings.Contains(res.Markdown, "<path") || strings.Contains(res.Markdown, "SmallLarge") {
		t.Errorf("Markdown keeps svg or all select options:\n%s", res.Markdown)
	}
}

func TestInputTitleWins(t *testing.T) {
	res, err := Extract(Input{URL: articleURL, Title: " Live title ", HTML: fixture(t, "article.html")}, Options{Include: map[string]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "Live title" || res.URL != articleURL {
		t.Errorf("Title, URL = %q, %q", res.Title, res.URL)
	}
}

func checkoutFrames(t testing.TB) []Frame {
	return []Frame{
		{ID: "F1", URL: "https://pay.example.net/widget/form.html", Origin: "https://pay.example.net", HTML: fixture(t, "frame-pay.html"), Read: true},
		{ID: "F2", URL: "https://shop.example.com/help/embed.html", Origin: "https://shop.example.com", HTML: fixture(t, "frame-help.html"), Read: true},
		{ID: "F3", URL: "https://ads.tracker.example/slot", Origin: "https://ads.tracker.example", Read: false, Error: "cross-origin frame not attached"},
	}
}

func TestFrames(t *testing.T) {
	in := Input{URL: "https://shop.example.com/checkout/", HTML: fixture(t, "frames.html"), Frames: checkoutFrames(t)}
	res, err := Extract(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := []Link{
		{"Edit cart", "https://shop.example.com/checkout/cart", true},
		// Frame links resolve against the frame's URL; SameSite is against the page.
		{"Payment terms", "https://pay.example.net/widget/terms.html", false},
		{"Provider privacy", "https://pay.example.net/privacy", false},
		{"FAQ", "https://shop.example.com/help/faq.html", true},
	}
	if !reflect.DeepEqual(res.Links, wantLinks) {
		t.Errorf("Links:\n got %+v\nwant %+v", res.Links, wantLinks)
	}
	wantHeadings := []Heading{{1, "Checkout"}, {2, "Card details"}, {4, "Need help?"}}
	if !reflect.DeepEqual(res.Headings, wantHeadings) {
		t.Errorf("Headings = %+v, want %+v", res.Headings, wantHeadings)
	}
	for _, want := range []string{"Review your order", "Card number", "Pay 42.00 EUR", "Need help?\n\nCall us or read the FAQ."} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("Text lacks %q:\n%s", want, res.Text)
		}
	}
	if i, j := strings.Index(res.Text, "Review your order"), strings.Index(res.Text, "Card details"); i < 0 || j < i {
		t.Errorf("frame text not after the page's:\n%s", res.Text)
	}
	for _, want := range []string{
		"<!-- frame F1 https://pay.example.net/widget/form.html -->\n\n## Card details",
		"[Payment terms](https://pay.example.net/widget/terms.html)",
		"<!-- frame F2 https://shop.example.com/help/embed.html -->\n\n#### Need help?",
		"[FAQ](https://shop.example.com/help/faq.html)",
	} {
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, res.Markdown)
		}
	}
	if strings.Contains(res.Markdown, "frame F3") {
		t.Error("unread frame has a Markdown section")
	}
	wantFrames := []Frame{
		{ID: "F1", URL: "https://pay.example.net/widget/form.html", Origin: "https://pay.example.net", Read: true},
		{ID: "F2", URL: "https://shop.example.com/help/embed.html", Origin: "https://shop.example.com", Read: true},
		{ID: "F3", URL: "https://ads.tracker.example/slot", Origin: "https://ads.tracker.example", Read: false, Error: "cross-origin frame not attached"},
	}
	if !reflect.DeepEqual(res.Frames, wantFrames) {
		t.Errorf("Frames = %+v", res.Frames)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "F3") && strings.Contains(w, "cross-origin frame not attached")
	}) {
		t.Errorf("no warning for the unread frame: %q", res.Warnings)
	}
	if res.Reader != nil && strings.Contains(res.Reader.Text, "Card details") {
		t.Error("reader view includes frame content")
	}
}

func TestSrcdocFrameResolvesAgainstPage(t *testing.T) {
	in := Input{URL: "https://shop.example.com/checkout/", HTML: "<p>x</p>", Frames: []Frame{
		{ID: "F9", URL: "about:srcdoc", HTML: `<a href="help.html">Help</a>`, Read: true},
	}}
	res, err := Extract(in, Options{Include: map[string]bool{FieldLinks: true}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Link{{"Help", "https://shop.example.com/checkout/help.html", true}}; !reflect.DeepEqual(res.Links, want) {
		t.Errorf("Links = %+v, want %+v", res.Links, want)
	}
}

func TestMaxChars(t *testing.T) {
	full := extractFixture(t, "article.html", articleURL, Options{})
	for _, tc := range []struct {
		name string
		max  int
	}{
		{"short", 40},
		{"exactly text length", utf8.RuneCountInString(full.Text)},
		{"longer than everything", 1 << 20},
		{"unlimited", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := extractFixture(t, "article.html", articleURL, Options{MaxChars: tc.max})
			fields := []struct {
				name     string
				got, old string
			}{
				{"text", res.Text, full.Text},
				{"markdown", res.Markdown, full.Markdown},
				{"reader.text", res.Reader.Text, full.Reader.Text},
				{"reader.markdown", res.Reader.Markdown, full.Reader.Markdown},
			}
			for _, f := range fields {
				n := utf8.RuneCountInString(f.old)
				if tc.max == 0 || n <= tc.max {
					if f.got != f.old {
						t.Errorf("%s changed without need", f.name)
					}
					continue
				}
				marker := TruncationMarker(n - tc.max)
				if !strings.HasSuffix(f.got, marker) {
					t.Errorf("%s = %q, want suffix %q", f.name, f.got, marker)
				}
				kept := strings.TrimSuffix(f.got, marker)
				if utf8.RuneCountInString(kept) != tc.max || !strings.HasPrefix(f.old, kept) {
					t.Errorf("%s kept %q, want the first %d chars", f.name, kept, tc.max)
				}
				if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, f.name+" truncated") }) {
					t.Errorf("no truncation warning for %s: %q", f.name, res.Warnings)
				}
			}
			if (tc.max == 0 || tc.max >= len(full.Markdown)) && len(res.Warnings) != 0 {
				t.Errorf("warnings without truncation: %q", res.Warnings)
			}
			if res.Reader.Length != full.Reader.Length {
				t.Errorf("Reader.Length = %d, want the full %d", res.Reader.Length, full.Reader.Length)
			}
		})
	}
}

func TestTruncateMultibyte(t *testing.T) {
	s := "héllo wörld ☃☃☃"
	var warned []string
	truncate(&s, 7, "text", func(f string, a ...any) { warned = append(warned, f) })
	if want := "héllo w" + TruncationMarker(8); s != want {
		t.Errorf("got %q, want %q", s, want)
	}
	if len(warned) != 1 {
		t.Errorf("warnings: %q", warned)
	}
}

func TestInclude(t *testing.T) {
	all := []string{FieldText, FieldReader, FieldMarkdown, FieldLinks, FieldHeadings, FieldFrames}
	for _, tc := range []struct {
		name    string
		include map[string]bool
		want    []string
	}{
		{"nil means all", nil, all},
		{"empty means none", map[string]bool{}, nil},
		{"text only", map[string]bool{FieldText: true}, []string{FieldText}},
		{"false is ignored", map[string]bool{FieldLinks: true, FieldText: false}, []string{FieldLinks}},
		{"always-present keys accepted", map[string]bool{"title": true, "url": true, "warnings": true, FieldText: true}, []string{FieldText}},
		{"markdown and reader", map[string]bool{FieldMarkdown: true, FieldReader: true}, []string{FieldMarkdown, FieldReader}},
		{"headings and frames", map[string]bool{FieldHeadings: true, FieldFrames: true}, []string{FieldHeadings, FieldFrames}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{URL: "https://shop.example.com/checkout/", HTML: fixture(t, "article.html"), Frames: checkoutFrames(t)}
			res, err := Extract(in, Options{Include: tc.include})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{
				FieldText:     res.Text != "",
				FieldReader:   res.Reader != nil,
				FieldMarkdown: res.Markdown != "",
				FieldLinks:    len(res.Links) > 0,
				FieldHeadings: len(res.Headings) > 0,
				FieldFrames:   len(res.Frames) > 0,
			}
			for _, f := range all {
				if got[f] != slices.Contains(tc.want, f) {
					t.Errorf("%s present = %v, want %v", f, got[f], !got[f])
				}
			}
			if res.Title == "" || res.URL == "" || res.Warnings == nil {
				t.Errorf("title/url/warnings missing: %+v", res)
			}
		})
	}
	_, err := Extract(Input{HTML: "<p>x"}, Options{Include: map[string]bool{"txt": true}})
	if !errors.Is(err, ErrUnknownField) {
		t.Errorf("unknown field: err = %v, want ErrUnknownField", err)
	}
}

func TestReaderNilWhenNothingFound(t *testing.T) {
	res := extractFixture(t, "empty.html", "https://app.example.com/", Options{})
	if res.Reader != nil {
		t.Errorf("Reader = %+v, want nil", res.Reader)
	}
	if !slices.Contains(res.Warnings, warnNoReader) {
		t.Errorf("Warnings = %q, want %q", res.Warnings, warnNoReader)
	}
	if res.Title != "Loading" {
		t.Errorf("Title = %q", res.Title)
	}
}

func TestRelativeURLWithoutPageURL(t *testing.T) {
	res, err := Extract(Input{HTML: `<a href="/x">X</a>`}, Options{Include: map[string]bool{FieldLinks: true}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Link{{"X", "/x", false}}; !reflect.DeepEqual(res.Links, want) {
		t.Errorf("Links = %+v, want %+v", res.Links, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not absolute") {
		t.Errorf("Warnings = %q", res.Warnings)
	}
}

func TestSameSite(t *testing.T) {
	for _, tc := range []struct {
		page, href string
		want       bool
	}{
		{"https://www.example.co.uk/a", "https://shop.example.co.uk/b", true},
		{"https://www.example.co.uk/a", "https://other.co.uk/b", false},
		{"https://a.github.io/", "https://b.github.io/", false}, // github.io is a public suffix
		{"https://example.com/", "http://example.com:8080/x", true},
		{"https://example.com/", "mailto:me@example.com", false},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:9999/x", true},
		{"http://127.0.0.1:8080/", "http://127.0.0.2/x", false},
		{"http://localhost:3000/", "http://localhost/y", true},
		{"http://localhost:3000/", "http://api.localhost/y", false},
		{"http://intranet/", "http://intranet/y", true},
		{"http://EXAMPLE.com/", "https://www.example.COM/", true},
	} {
		page := mustParse(t, tc.page)
		if got := newSiteMatcher(page).same(mustParse(t, tc.href)); got != tc.want {
			t.Errorf("same(%s, %s) = %v, want %v", tc.page, tc.href, got, tc.want)
		}
	}
}

func TestResultJSONShape(t *testing.T) {
	res := extractFixture(t, "article.html", articleURL, Options{})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"title", "url", "text", "reader", "markdown", "links", "headings", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	reader := m["reader"].(map[string]any)
	for _, k := range []string{"title", "byline", "excerpt", "text", "markdown", "length"} {
		if _, ok := reader[k]; !ok {
			t.Errorf("reader JSON lacks %q", k)
		}
	}
	link := m["links"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(keys(link), []string{"href", "sameSite", "text"}) {
		t.Errorf("link keys = %v", keys(link))
	}
	// Fields not requested are absent, not null.
	b, _ = json.Marshal(&Result{Warnings: []string{}})
	if string(b) != `{"title":"","url":"","warnings":[]}` {
		t.Errorf("empty result JSON = %s", b)
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
