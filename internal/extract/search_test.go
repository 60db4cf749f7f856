package extract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func serp(t *testing.T, name string) string { return fixture(t, "search/"+name) }

const (
	urlGoquery = "https://github.com/PuerkitoBio/goquery"
	urlNetHTML = "https://pkg.go.dev/golang.org/x/net/html"
	urlZenrows = "https://www.zenrows.com/blog/golang-html-parser"
	urlVideo   = "https://www.youtube.com/watch?v=Zx7Y4sVmm3Q"
	titleHTML  = "html package - golang.org/x/net/html - Go Packages"
	snipGq     = "goquery brings a syntax and a set of features similar to jQuery to the Go language."
	snipZen    = "Learn how to parse HTML in Go with the net/html package and goquery, step by step."
)

func TestParseResults(t *testing.T) {
	for _, tc := range []struct {
		engine, file, url string
		want              []Hit
	}{
		{EngineDuckDuckGo, "duckduckgo.html", "https://html.duckduckgo.com/html/?q=golang+html+parser", []Hit{
			{1, "Go (programming language)", "https://en.wikipedia.org/wiki/Go_(programming_language)", "Go is a high-level general purpose programming language that is statically typed and compiled.", KindOther},
			// DuckDuckGo's ad links (y.js) do not carry the destination: kept as they are.
			{2, "GoLand: The Go IDE by JetBrains", "https://duckduckgo.com/y.js?ad_domain=jetbrains.com&ad_provider=bingv7aa&ad_type=txad&eddgt=Qz8vY2x1c3RlcjE%3D&rut=1f2e3d4c5b6a&u3=https%3A%2F%2Fwww.bing.com%2Faclick%3Fld%3De8abc%26u%3DaHR0cHM6Ly93d3cuamV0YnJhaW5zLmNvbS9nby8&vqd=4-123456789&iurl=%7B1%7DIG%3D0F1E2D3C", "Smart code completion, on-the-fly inspections and refactorings. Try GoLand free for 30 days.", KindAd},
			{3, titleHTML, urlNetHTML, "Package html implements an HTML5-compliant tokenizer and parser. Tokenization is done by creating a Tokenizer for an io.Reader r.", KindOrganic},
			{4, "GitHub - PuerkitoBio/goquery: A little like that j-thing, only in Go.", urlGoquery, snipGq + " It is based on Go's net/html package and the CSS Selector library cascadia.", KindOrganic},
			{5, "Golang parse HTML, extract all content with <body> </body> tags", "https://stackoverflow.com/questions/30109061/golang-parse-html-extract-all-content-with-body-body-tags?noredirect=1&lq=1", "As said in the title, I need to return all content within the body tags of an html document, including any subsequent html tags, etc.", KindOrganic},
			// The repeated pkg.go.dev result is reported once.
		}},
		{EngineBing, "bing.html", "https://www.bing.com/search?q=golang+html+parser&form=QBLH", []Hit{
			{1, "GoLand IDE - Try it free for 30 days", "https://www.jetbrains.com/go/", "Capable and Ergonomic Go IDE. Smart completion, refactorings and a debugger that just works.", KindAd},
			{2, titleHTML, urlNetHTML, "Package html implements an HTML5-compliant tokenizer and parser. Tokenization is done by creating a Tokenizer for an io.Reader r.", KindOrganic},
			{3, "Go 1.24 ships with a faster HTML tokenizer", "https://www.theverge.com/2025/1/14/go-1-24-released", "The release speeds up golang.org/x/net/html parsing by a third on large documents.", KindNews},
			{4, "Parsing HTML in Go without tears", "https://www.infoworld.com/article/3700000/parsing-html-in-go.html", "A practical tour of tokenizers, trees and CSS selectors.", KindNews},
			{5, "GitHub - PuerkitoBio/goquery: A little like that j-thing, only in Go.", urlGoquery, "Mar 18, 2024 · " + snipGq, KindOrganic},
			{6, "Web scraping in Go with colly and goquery", "https://www.bing.com/videos/riverview/relatedvideo?q=golang+html+parser&mid=6A7B8C9D0E1F2A3B4C5D&FORM=VIRE", "12.4K views · 8 months ago · YouTube › Gopher Academy", KindVideo},
			{7, "Golang HTML Parser: How to Parse HTML in Go - ZenRows", urlZenrows, snipZen, KindOrganic},
		}},
		{EngineGoogle, "google.html", "https://www.google.com/search?q=golang+html+parser", []Hit{
			{1, "GoLand: A Go IDE by JetBrains - Try It Free for 30 Days", "https://www.jetbrains.com/go/?source=google&utm_campaign=go", "Capable and ergonomic IDE for Go developers. Smart code completion and on-the-fly error detection.", KindAd},
			{2, titleHTML, urlNetHTML, "Package html implements an HTML5-compliant tokenizer and parser. Tokenization is done by creating a Tokenizer for an io.Reader r.", KindOrganic},
			{3, "Go 1.24 is released", "https://go.dev/blog/go1.24", "Faster maps, generic type aliases and a new html tokenizer option.", KindNews},
			{4, "Go 1.24 lands with Swiss tables", "https://www.theregister.com/2025/02/11/go_1_24/", "", KindNews},
			{5, "PuerkitoBio/goquery: A little like that j-thing, only in Go.", urlGoquery, "Mar 18, 2024 — " + snipGq, KindOrganic},
			{6, "Parsing HTML with Go - net/html and goquery", urlVideo, "YouTube · Gopher Academy · Jan 12, 2024", KindVideo},
			{7, "Golang HTML Parser: How to Parse HTML in Go", urlZenrows, snipZen, KindOrganic},
			{8, "Scrapfly - Web Scraping API", "https://scrapfly.io/?gclid=abc", "Scrape any page with a headless browser API.", KindAd},
			// "People also ask", the knowledge panel and related searches are not hits.
		}},
		{EngineBrave, "brave.html", "https://search.brave.com/search?q=golang+html+parser&source=web", []Hit{
			{1, "GoLand — the Go IDE", "https://www.jetbrains.com/go/", "Everything you need for Go development, in one IDE.", KindAd},
			{2, titleHTML, urlNetHTML, "Package html implements an HTML5-compliant tokenizer and parser.", KindOrganic},
			{3, "Go 1.24 is released", "https://go.dev/blog/go1.24", "go.dev · 3 days ago", KindNews},
			{4, "Go 1.24 lands with Swiss tables", "https://www.theregister.com/2025/02/11/go_1_24/", "theregister.com · 1 week ago", KindNews},
			{5, "GitHub - PuerkitoBio/goquery: A little like that j-thing, only in Go.", urlGoquery, "March 18, 2024 - " + snipGq, KindOrganic},
			{6, "Parsing HTML with Go - net/html and goquery", urlVideo, "youtube.com · Gopher Academy", KindVideo},
			{7, "Best HTML parser for Go? : r/golang", "https://www.reddit.com/r/golang/comments/abc123/best_html_parser/", "net/html for speed, goquery if you like jQuery selectors.", KindOther},
			{8, "Golang HTML Parser: How to Parse HTML in Go", urlZenrows, snipZen, KindOrganic},
		}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			page := serp(t, tc.file)
			for _, name := range []string{tc.engine, ""} { // explicit, and picked by URL
				got, err := ParseResults(name, page, tc.url)
				if err != nil {
					t.Fatalf("ParseResults(%q): %v", name, err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("ParseResults(%q):\n%s", name, diffHits(got, tc.want))
				}
			}
		})
	}
}

func diffHits(got, want []Hit) string {
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w Hit
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			b.WriteString("  got  " + hitString(g) + "\n  want " + hitString(w) + "\n")
		}
	}
	return b.String()
}

func hitString(h Hit) string {
	return strings.Join([]string{string(rune('0' + h.Rank)), h.Kind, h.Title, h.URL, h.Snippet}, " | ")
}

func TestParseResultsNoResults(t *testing.T) {
	for _, tc := range []struct{ engine, file, url string }{
		{EngineDuckDuckGo, "duckduckgo-noresults.html", "https://html.duckduckgo.com/html/?q=qzxwvjkplm"},
		{EngineBing, "bing-noresults.html", "https://www.bing.com/search?q=qzxwvjkplm"},
		{EngineGoogle, "google-noresults.html", "https://www.google.de/search?q=qzxwvjkplm"},
		{EngineBrave, "brave-noresults.html", "https://search.brave.com/search?q=qzxwvjkplm"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			hits, err := ParseResults(tc.engine, serp(t, tc.file), tc.url)
			if err != nil {
				t.Fatalf("err = %v, want an empty list", err)
			}
			if hits == nil || len(hits) != 0 {
				t.Errorf("hits = %#v, want an empty non-nil list", hits)
			}
		})
	}
}

func TestParseResultsUnsupported(t *testing.T) {
	for _, tc := range []struct {
		engine, file, url, reason string
	}{
		{EngineDuckDuckGo, "not-a-results-page.html", "https://html.duckduckgo.com/html/?q=x", "no results container"},
		{EngineBing, "not-a-results-page.html", "https://www.bing.com/search?q=x", "no results container"},
		{EngineGoogle, "not-a-results-page.html", "https://www.google.com/search?q=x", "no results container"},
		{EngineBrave, "not-a-results-page.html", "https://search.brave.com/search?q=x", "no results container"},
		{EngineDuckDuckGo, "duckduckgo-challenge.html", "https://html.duckduckgo.com/html/?q=x", "bot challenge"},
		{EngineGoogle, "google-consent.html", "https://consent.google.com/ml?continue=https://www.google.com/search?q%3Dx", "consent"},
		{EngineGoogle, "google-consent.html", "https://www.google.com/search?q=x", "consent"},
		{EngineGoogle, "google.html", "https://www.google.com/sorry/index?continue=https://www.google.com/search", "captcha"},
		// Another engine's page: the structure is not recognised.
		{EngineBing, "google.html", "https://www.google.com/search?q=x", "no results container"},
		{EngineGoogle, "duckduckgo-noresults.html", "https://www.google.com/search?q=x", "no results container"},
		{EngineBrave, "bing.html", "https://www.bing.com/search?q=x", "no results container"},
		// A recognised container with neither hits nor a "no results" notice.
		{EngineDuckDuckGo, "empty-links.html", "https://html.duckduckgo.com/html/?q=x", "no results found"},
	} {
		t.Run(tc.engine+"/"+tc.file, func(t *testing.T) {
			var page string
			if tc.file == "empty-links.html" {
				page = `<html><body><div class="serp__results"><div id="links" class="results"></div></div></body></html>`
			} else {
				page = serp(t, tc.file)
			}
			hits, err := ParseResults(tc.engine, page, tc.url)
			if !errors.Is(err, ErrUnsupportedResultsPage) {
				t.Fatalf("err = %v (hits %v), want ErrUnsupportedResultsPage", err, hits)
			}
			var upe *UnsupportedPageError
			if !errors.As(err, &upe) || upe.Engine != tc.engine || upe.URL != tc.url || !strings.Contains(upe.Reason, tc.reason) {
				t.Errorf("error = %#v, want engine %s, reason containing %q", upe, tc.engine, tc.reason)
			}
			if hits != nil {
				t.Errorf("hits = %v with an error", hits)
			}
		})
	}
}

func TestParseResultsEngineDetection(t *testing.T) {
	// A fixture served from a local test server: the meta tag names the parser.
	hits, err := ParseResults("", serp(t, "fixture-meta.html"), "http://127.0.0.1:8080/serp/local.html")
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{{1, "Local article", "http://127.0.0.1:8080/pages/article.html", "A page served by the test server.", KindOrganic}}
	if !reflect.DeepEqual(hits, want) {
		t.Errorf("meta: hits = %+v", hits)
	}
	// By the engine name in a loopback URL's path, and by DOM structure alone.
	for _, tc := range []struct{ file, url string }{
		{"bing.html", "http://127.0.0.1:8080/fixtures/bing.html"},
		{"google.html", "http://localhost:9000/search?engine=google&q=x"},
		{"brave.html", "http://127.0.0.1:8080/results.html"},
		{"duckduckgo.html", "http://127.0.0.1:8080/results.html"},
		{"bing.html", "http://127.0.0.1:8080/results.html"},
		{"google.html", "http://127.0.0.1:8080/results.html"},
	} {
		hits, err := ParseResults("", serp(t, tc.file), tc.url)
		if err != nil || len(hits) < 5 {
			t.Errorf("%s at %s: %d hits, err %v", tc.file, tc.url, len(hits), err)
		}
	}
	if _, err := ParseResults("", serp(t, "not-a-results-page.html"), "https://example.com/about"); !errors.Is(err, ErrUnknownEngine) {
		t.Errorf("unknown page: err = %v, want ErrUnknownEngine", err)
	}
	if _, err := ParseResults("altavista", serp(t, "bing.html"), "https://www.bing.com/search?q=x"); !errors.Is(err, ErrUnknownEngine) {
		t.Errorf("unknown engine: err = %v, want ErrUnknownEngine", err)
	}
	if hits, err := ParseResults("DDG", serp(t, "duckduckgo.html"), "https://html.duckduckgo.com/html/"); err != nil || len(hits) != 5 {
		t.Errorf("alias ddg: %d hits, %v", len(hits), err)
	}
}

func TestEngines(t *testing.T) {
	es := Engines()
	var names []string
	for _, e := range es {
		names = append(names, e.Name)
		if strings.Count(e.Template, "%s") != 1 || !strings.HasPrefix(e.Template, "https://") {
			t.Errorf("%s template %q", e.Name, e.Template)
		}
	}
	if want := []string{EngineDuckDuckGo, EngineBing, EngineGoogle, EngineBrave}; !reflect.DeepEqual(names, want) {
		t.Errorf("engines = %v, want %v (DuckDuckGo first: the default)", names, want)
	}
	es[0].Name = "mutated"
	if Engines()[0].Name != EngineDuckDuckGo {
		t.Error("Engines returns the package's slice")
	}
	e, _ := EngineByName("google")
	if got, want := e.URL(`go "html" & parser/1+1`), "https://www.google.com/search?q=go+%22html%22+%26+parser%2F1%2B1"; got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
}

func TestEngineFor(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://html.duckduckgo.com/html/?q=x", EngineDuckDuckGo},
		{"https://duckduckgo.com/?q=x", EngineDuckDuckGo},
		{"https://www.bing.com/search?q=x", EngineBing},
		{"https://cn.bing.com/search?q=x", EngineBing},
		{"https://www.google.com/search?q=x", EngineGoogle},
		{"https://www.google.co.uk/search?q=x", EngineGoogle},
		{"https://google.de/search?q=x", EngineGoogle},
		{"https://search.brave.com/search?q=x", EngineBrave},
		{"http://127.0.0.1:8080/serp/duckduckgo.html", EngineDuckDuckGo},
		{"http://127.0.0.1:8080/ddg?q=x", EngineDuckDuckGo},
		{"http://[::1]:8080/brave/search?q=x", EngineBrave},
		{"http://localhost/x?engine=bing", EngineBing},
		{"https://mail.google.com/mail/", ""},
		{"https://google.evil.example/search?q=x", ""},
		{"https://notbing.com/search?q=x", ""},
		{"https://brave.com/", ""},
		{"http://10.0.0.1/google.html", ""}, // names count on loopback hosts only
		{"http://127.0.0.1:8080/results.html", ""},
		{"::not a url", ""},
	} {
		e, ok := EngineFor(tc.url)
		if e.Name != tc.want || ok != (tc.want != "") {
			t.Errorf("EngineFor(%s) = %q, %v; want %q", tc.url, e.Name, ok, tc.want)
		}
	}
}

func TestUnwrapRedirect(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2&rut=abc", "https://example.com/a?b=1&c=2"},
		{"https://www.google.com/url?q=https://example.com/x&sa=U&ved=abc", "https://example.com/x"},
		{"https://www.google.co.uk/url?sa=t&url=https%3A%2F%2Fexample.com%2Fy&ved=1", "https://example.com/y"},
		{"https://www.googleadservices.com/pagead/aclk?sa=L&ai=x&adurl=https://shop.example/%3Fa%3D1", "https://shop.example/?a=1"},
		{"https://www.googleadservices.com/pagead/aclk?sa=L&ai=x&adurl=", "https://www.googleadservices.com/pagead/aclk?sa=L&ai=x&adurl="},
		{"https://www.bing.com/ck/a?!&&p=abc&u=a1aHR0cHM6Ly9naXRodWIuY29tL1B1ZXJraXRvQmlvL2dvcXVlcnk&ntb=1", "https://github.com/PuerkitoBio/goquery"},
		{"https://www.bing.com/ck/a?u=a1bm90LWEtdXJs&ntb=1", "https://www.bing.com/ck/a?u=a1bm90LWEtdXJs&ntb=1"}, // decodes to "not-a-url"
		{"https://search.brave.com/a/redirect?click_url=https%3A%2F%2Fads.example%2F&placement_id=1", "https://ads.example/"},
		{"https://duckduckgo.com/l/?uddg=javascript%3Aalert(1)", "https://duckduckgo.com/l/?uddg=javascript%3Aalert(1)"},
		{"https://example.com/url?q=https://evil.example/", "https://example.com/url?q=https://evil.example/"},
	} {
		if got := unwrapRedirect(tc.in); got != tc.want {
			t.Errorf("unwrapRedirect(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func BenchmarkParseResults(b *testing.B) {
	page := fixture(b, "search/google.html")
	for b.Loop() {
		if _, err := ParseResults(EngineGoogle, page, "https://www.google.com/search?q=x"); err != nil {
			b.Fatal(err)
		}
	}
}
