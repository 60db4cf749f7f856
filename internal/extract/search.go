package extract

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"
)

// Hit is one result of a search engine's results page.
type Hit struct {
	// Rank is the 1-based position of the hit among all hits of the page, in page
	// order, whatever their kind.
	Rank    int    `json:"rank"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	Kind    string `json:"kind"`
}

// Hit kinds.
const (
	KindOrganic = "organic"
	KindAd      = "ad"
	KindNews    = "news"
	KindVideo   = "video"
	KindOther   = "other"
)

// Engine is a search engine dtb can drive: Template is the results-page URL with
// one %s where the query-escaped search terms go.
type Engine struct {
	Name     string `json:"name"`
	Template string `json:"template"`
}

// URL is the results-page URL for query.
func (e Engine) URL(query string) string {
	return strings.Replace(e.Template, "%s", url.QueryEscape(query), 1)
}

// Engine names.
const (
	EngineDuckDuckGo = "duckduckgo"
	EngineBing       = "bing"
	EngineGoogle     = "google"
	EngineBrave      = "brave"
)

var engines = []Engine{
	{EngineDuckDuckGo, "https://html.duckduckgo.com/html/?q=%s"},
	{EngineBing, "https://www.bing.com/search?q=%s"},
	{EngineGoogle, "https://www.google.com/search?q=%s"},
	{EngineBrave, "https://search.brave.com/search?q=%s"},
}

// Engines lists the built-in engines; the first, DuckDuckGo's HTML version (no
// JavaScript, no consent wall), is the default.
func Engines() []Engine { return slices.Clone(engines) }

// EngineNames lists the built-in engines' names, comma-separated, for help
// texts and errors.
func EngineNames() string {
	n := make([]string, len(engines))
	for i, e := range engines {
		n[i] = e.Name
	}
	return strings.Join(n, ", ")
}

// EngineByName returns the built-in engine called name (case-insensitive; "ddg"
// is DuckDuckGo).
func EngineByName(name string) (Engine, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "ddg" {
		name = EngineDuckDuckGo
	}
	for _, e := range engines {
		if e.Name == name {
			return e, true
		}
	}
	return Engine{}, false
}

// EngineFor picks the engine whose results page pageURL is, by host:
// *.duckduckgo.com, *.bing.com, google.<any public suffix> and www.google.…,
// search.brave.com. On a loopback host (127.0.0.0/8, ::1, localhost: fixture pages
// in tests) the engine's name (or "ddg") in the path or query decides, e.g.
// http://127.0.0.1:8080/search/bing.html. ParseResults with no engine name also
// honours <meta name="dtb-engine" content="…"> and recognises each engine's DOM.
func EngineFor(pageURL string) (Engine, bool) {
	u, err := url.Parse(strings.TrimSpace(pageURL))
	if err != nil {
		return Engine{}, false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	switch {
	case host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com"):
		return EngineByName(EngineDuckDuckGo)
	case host == "bing.com" || strings.HasSuffix(host, ".bing.com"):
		return EngineByName(EngineBing)
	case host == "search.brave.com":
		return EngineByName(EngineBrave)
	case isGoogleHost(host):
		return EngineByName(EngineGoogle)
	case isLoopback(host):
		where := strings.ToLower(u.EscapedPath() + "?" + u.RawQuery)
		for _, e := range engines {
			if strings.Contains(where, e.Name) {
				return e, true
			}
		}
		if strings.Contains(where, "ddg") {
			return EngineByName(EngineDuckDuckGo)
		}
	}
	return Engine{}, false
}

// isGoogleHost matches google.com, www.google.de, google.co.uk … (a registrable
// domain "google.<public suffix>" with no subdomain but www).
func isGoogleHost(host string) bool {
	host = strings.TrimPrefix(host, "www.")
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	return err == nil && d == host && strings.HasPrefix(host, "google.")
}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrUnsupportedResultsPage is matched (errors.Is) by ParseResults' error when the
// page is not a results page its parser can read: another page, a changed layout,
// a captcha or a consent wall. A results page that says it found nothing is not an
// error: ParseResults returns an empty, non-nil list for it.
var ErrUnsupportedResultsPage = errors.New("unsupported results page")

// ErrUnknownEngine is returned by ParseResults for an engine name it has no parser
// for (and when no engine name was given and none could be recognised).
var ErrUnknownEngine = errors.New("unknown search engine")

// UnsupportedPageError details an ErrUnsupportedResultsPage.
type UnsupportedPageError struct {
	Engine string // the parser that was tried
	URL    string // the page
	Reason string // what was found instead, e.g. "captcha", "consent wall", "no results container"
}

func (e *UnsupportedPageError) Error() string {
	return fmt.Sprintf("%s: %s is not a readable results page (%s)", e.Engine, e.URL, e.Reason)
}

// Is makes errors.Is(err, ErrUnsupportedResultsPage) true.
func (e *UnsupportedPageError) Is(target error) bool { return target == ErrUnsupportedResultsPage }

// serpParser reads one engine's results page. It returns the hits in page order,
// or none and a reason when the page is not one it can read; noResults reports a
// recognised "nothing found" page.
type serpParser func(doc *html.Node, base *url.URL) (hits []Hit, noResults bool, reason string)

var parsers = map[string]serpParser{
	EngineDuckDuckGo: parseDuckDuckGo,
	EngineBing:       parseBing,
	EngineGoogle:     parseGoogle,
	EngineBrave:      parseBrave,
}

// ParseResults reads the hits of a search engine's results page (the rendered HTML,
// as the browser serialised it, and the page's URL). engineName selects the parser
// (see Engines); empty picks it from a <meta name="dtb-engine"> tag, then the URL
// (EngineFor), then the page's structure. Hit URLs are absolute, with the engine's
// redirect wrappers (DuckDuckGo /l/?uddg=, Google /url?q=, Bing /ck/a?u=a1…,
// Google and Bing ad clicks, Brave /a/redirect?click_url=) decoded; DuckDuckGo's
// ad links (y.js) carry no destination and are kept as they are. Identical (kind, URL) pairs are reported once.
func ParseResults(engineName, htmlText, pageURL string) ([]Hit, error) {
	doc, err := parseHTML(htmlText)
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(strings.TrimSpace(engineName))
	if name == "" {
		name = detectEngine(doc, pageURL)
		if name == "" {
			return nil, fmt.Errorf("%w: cannot tell which engine served %s", ErrUnknownEngine, pageURL)
		}
	}
	if e, ok := EngineByName(name); ok {
		name = e.Name
	}
	parse, ok := parsers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownEngine, engineName)
	}
	base, err := url.Parse(strings.TrimSpace(pageURL))
	if err != nil || !base.IsAbs() {
		base = nil
	}
	hits, noResults, reason := parse(doc, base)
	if len(hits) == 0 {
		if noResults {
			return []Hit{}, nil
		}
		if reason == "" {
			reason = "no results found in the page's structure"
		}
		return nil, &UnsupportedPageError{Engine: name, URL: pageURL, Reason: reason}
	}
	out := hits[:0]
	seen := map[[2]string]bool{}
	for _, h := range hits {
		key := [2]string{h.Kind, h.URL}
		if h.URL == "" || seen[key] {
			continue
		}
		seen[key] = true
		h.Rank = len(out) + 1
		out = append(out, h)
	}
	return out, nil
}

var metaEngine = cascadia.MustCompile(`meta[name="dtb-engine"]`)

func detectEngine(doc *html.Node, pageURL string) string {
	if m := cascadia.Query(doc, metaEngine); m != nil {
		if e, ok := EngineByName(attr(m, "content")); ok {
			return e.Name
		}
	}
	if e, ok := EngineFor(pageURL); ok {
		return e.Name
	}
	for _, s := range []struct {
		name string
		sel  cascadia.Selector
	}{
		{EngineDuckDuckGo, ddgMarker},
		{EngineBing, bingMarker},
		{EngineGoogle, googleMarker},
		{EngineBrave, braveMarker},
	} {
		if cascadia.Query(doc, s.sel) != nil {
			return s.name
		}
	}
	return ""
}

// hitURL resolves a result link against the page and unwraps engine redirects.
func hitURL(base *url.URL, href string) string {
	u, ok := resolveHref(base, href)
	if !ok {
		return ""
	}
	return unwrapRedirect(u.String())
}

// unwrapRedirect returns the destination of a search engine's click-tracking URL,
// or u unchanged.
func unwrapRedirect(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	host := strings.ToLower(p.Hostname())
	q := p.Query()
	var dest string
	switch {
	case (host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com")) && strings.HasPrefix(p.Path, "/l/"):
		dest = q.Get("uddg")
	case isGoogleHost(host) && p.Path == "/url":
		dest = firstNonEmpty(q.Get("q"), q.Get("url"))
	case (host == "www.googleadservices.com" || isGoogleHost(host)) && (p.Path == "/pagead/aclk" || p.Path == "/aclk"):
		dest = q.Get("adurl")
	case host == "search.brave.com" && p.Path == "/a/redirect":
		dest = q.Get("click_url")
	case (host == "bing.com" || strings.HasSuffix(host, ".bing.com")) && (p.Path == "/ck/a" || p.Path == "/aclk"):
		dest = decodeBingU(q.Get("u"))
	}
	if d, err := url.Parse(dest); err == nil && (d.Scheme == "http" || d.Scheme == "https") && d.Host != "" {
		return d.String()
	}
	return u
}

// decodeBingU decodes Bing's u parameter: the URL in unpadded URL-safe base64,
// after an "a1" on organic links.
func decodeBingU(v string) string {
	s := strings.TrimPrefix(v, "a1")
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b)
		}
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// queryText is the text of the first match of sel under n, or "".
func queryText(n *html.Node, sel cascadia.Selector) string {
	if m := cascadia.Query(n, sel); m != nil {
		return textContent(m)
	}
	return ""
}

// textWithout is n's text without the subtrees matching skip (labels and icons
// inside snippets).
func textWithout(n *html.Node, skip cascadia.Selector) string {
	if cascadia.Query(n, skip) == nil {
		return textContent(n)
	}
	c := cloneTree(n)
	for _, m := range cascadia.QueryAll(c, skip) {
		if m.Parent != nil {
			m.Parent.RemoveChild(m)
		}
	}
	return textContent(c)
}

// metaText renders metadata lines (source, date, views) whose parts are separate
// elements laid apart by CSS: each node's element children joined with " · ", the
// nodes joined the same way.
func metaText(nodes []*html.Node) string {
	var parts []string
	for _, n := range nodes {
		kids := false
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				kids = true
				if t := textContent(c); t != "" {
					parts = append(parts, t)
				}
			}
		}
		if !kids {
			if t := textContent(n); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, " · ")
}

// closest returns n or its nearest ancestor matching sel.
func closest(n *html.Node, sel cascadia.Selector) *html.Node {
	for ; n != nil; n = n.Parent {
		if n.Type == html.ElementNode && sel.Match(n) {
			return n
		}
	}
	return nil
}

// walkSkip visits the elements under root in document order; visit returns true to
// skip the element's subtree (it consumed it).
func walkSkip(root *html.Node, visit func(*html.Node) bool) {
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if visit(c) {
			continue
		}
		walkSkip(c, visit)
	}
}

func isAnchor(n *html.Node) bool { return n.DataAtom == atom.A && n.Namespace == "" }

// DuckDuckGo's HTML version (html.duckduckgo.com/html/): each hit is a div.result
// (div.result--ad for ads) with a.result__a (title, /l/?uddg= redirect) and
// .result__snippet; an instant answer sits in .zci above them.
var (
	ddgMarker    = cascadia.MustCompile(`.serp__results, #links.results, .result__a, #links .no-results`)
	ddgContainer = cascadia.MustCompile(`#links, .serp__results`)
	ddgBlocked   = cascadia.MustCompile(`.anomaly-modal, #challenge-form, .anomaly-modal__title`)
	ddgNoResults = cascadia.MustCompile(`.no-results, .result--no-result`)
	ddgResult    = cascadia.MustCompile(`.result, .zci`)
	ddgTitle     = cascadia.MustCompile(`a.result__a`)
	ddgSnippet   = cascadia.MustCompile(`.result__snippet`)
	ddgZCITitle  = cascadia.MustCompile(`.zci__heading a[href], .zci__heading`)
	ddgZCIText   = cascadia.MustCompile(`#zero_click_abstract, .zci__result`)
	ddgZCISkip   = cascadia.MustCompile(`a, img, .zci__more-at`)
)

func parseDuckDuckGo(doc *html.Node, base *url.URL) ([]Hit, bool, string) {
	if cascadia.Query(doc, ddgBlocked) != nil {
		return nil, false, "bot challenge (anomaly page)"
	}
	root := cascadia.Query(doc, ddgContainer)
	if root == nil {
		return nil, false, "no results container (#links)"
	}
	var hits []Hit
	for _, r := range cascadia.QueryAll(doc, ddgResult) {
		if hasClass(r, "zci") {
			t := cascadia.Query(r, ddgZCITitle)
			if t == nil {
				continue
			}
			link := t
			if !isAnchor(link) {
				link = findFirst(t, isAnchor)
			}
			if link == nil {
				continue
			}
			snippet := ""
			if s := cascadia.Query(r, ddgZCIText); s != nil {
				snippet = textWithout(s, ddgZCISkip)
			}
			hits = append(hits, Hit{Title: textContent(t), URL: hitURL(base, attr(link, "href")), Snippet: snippet, Kind: KindOther})
			continue
		}
		a := cascadia.Query(r, ddgTitle)
		if a == nil {
			continue
		}
		kind := KindOrganic
		if hasClass(r, "result--ad") {
			kind = KindAd
		}
		hits = append(hits, Hit{
			Title:   textContent(a),
			URL:     hitURL(base, attr(a, "href")),
			Snippet: queryText(r, ddgSnippet),
			Kind:    kind,
		})
	}
	return hits, cascadia.Query(root, ddgNoResults) != nil, ""
}

// Bing: the hits are the items of ol#b_results: li.b_algo (h2 a, .b_caption p),
// li.b_ad (sponsored, one or more ads), and li.b_ans answers (news carousel
// .b_nwsAns, video carousel .b_vidAns / .mc_vtvc); li.b_no says nothing was found.
// Result links go through /ck/a?u=a1<base64 URL>.
var (
	bingMarker     = cascadia.MustCompile(`ol#b_results, #b_results`)
	bingContainer  = cascadia.MustCompile(`#b_results`)
	bingBlocked    = cascadia.MustCompile(`#b_captcha, .b_captcha, iframe[src*="/turing/captcha"]`)
	bingNoResults  = cascadia.MustCompile(`li.b_no`)
	bingTitle      = cascadia.MustCompile(`h2 a[href]`)
	bingSnippet    = cascadia.MustCompile(`.b_caption p, p.b_lineclamp2, p.b_lineclamp3, p.b_lineclamp4, .b_algoSlug, .b_snippet`)
	bingSnipSkip   = cascadia.MustCompile(`.algoSlug_icon, .b_ad_label`)
	bingAdItem     = cascadia.MustCompile(`.sb_add, li.b_adLastChild, .b_adSlug`)
	bingAdSnippet  = cascadia.MustCompile(`.b_caption p, .b_ad_description, .b_vlist2col`)
	bingNewsAns    = cascadia.MustCompile(`.b_nwsAns, [data-tag="RelatedQnA.News"], .nws_cwrp`)
	bingNewsItem   = cascadia.MustCompile(`.nws_cwrp, .news_fbcard, .na_card_wrp`)
	bingNewsTitle  = cascadia.MustCompile(`.na_t, .news_title_tts, .title`)
	bingNewsDesc   = cascadia.MustCompile(`.itm_desc, .na_desc, .snippet`)
	bingVideoAns   = cascadia.MustCompile(`.b_vidAns, .mc_vtvc`)
	bingVideoItem  = cascadia.MustCompile(`.mc_vtvc`)
	bingVideoTitle = cascadia.MustCompile(`.mc_vtvc_title`)
	bingVideoMeta  = cascadia.MustCompile(`.mc_vtvc_meta_row`)
)

func parseBing(doc *html.Node, base *url.URL) ([]Hit, bool, string) {
	if cascadia.Query(doc, bingBlocked) != nil {
		return nil, false, "captcha"
	}
	root := cascadia.Query(doc, bingContainer)
	if root == nil {
		return nil, false, "no results container (#b_results)"
	}
	var hits []Hit
	for li := root.FirstChild; li != nil; li = li.NextSibling {
		if li.Type != html.ElementNode || li.DataAtom != atom.Li {
			continue
		}
		switch {
		case hasClass(li, "b_algo"):
			a := cascadia.Query(li, bingTitle)
			if a == nil {
				continue
			}
			snippet := ""
			if s := cascadia.Query(li, bingSnippet); s != nil {
				snippet = textWithout(s, bingSnipSkip)
			}
			hits = append(hits, Hit{Title: textContent(a), URL: hitURL(base, attr(a, "href")), Snippet: snippet, Kind: KindOrganic})
		case hasClass(li, "b_ad"):
			items := cascadia.QueryAll(li, bingAdItem)
			if len(items) == 0 {
				items = []*html.Node{li}
			}
			for _, it := range items {
				a := cascadia.Query(it, bingTitle)
				if a == nil {
					continue
				}
				snippet := ""
				if s := cascadia.Query(it, bingAdSnippet); s != nil {
					snippet = textWithout(s, bingSnipSkip)
				}
				hits = append(hits, Hit{Title: textContent(a), URL: hitURL(base, attr(a, "href")), Snippet: snippet, Kind: KindAd})
			}
		case hasClass(li, "b_ans") && cascadia.Query(li, bingNewsAns) != nil:
			for _, it := range cascadia.QueryAll(li, bingNewsItem) {
				a := it
				if !isAnchor(a) {
					a = findFirst(it, func(n *html.Node) bool { return isAnchor(n) && hasAttr(n, "href") })
				}
				if a == nil {
					continue
				}
				title := queryText(it, bingNewsTitle)
				if title == "" {
					title = firstNonEmpty(collapseSpace(attr(a, "title")), textContent(a))
				}
				hits = append(hits, Hit{Title: title, URL: hitURL(base, attr(a, "href")), Snippet: queryText(it, bingNewsDesc), Kind: KindNews})
			}
		case hasClass(li, "b_ans") && cascadia.Query(li, bingVideoAns) != nil:
			for _, it := range cascadia.QueryAll(li, bingVideoItem) {
				a := findFirst(it, func(n *html.Node) bool { return isAnchor(n) && hasAttr(n, "href") })
				if a == nil {
					continue
				}
				title := queryText(it, bingVideoTitle)
				if t := cascadia.Query(it, bingVideoTitle); t != nil && attr(t, "title") != "" {
					title = collapseSpace(attr(t, "title"))
				}
				hits = append(hits, Hit{Title: title, URL: hitURL(base, attr(a, "href")), Snippet: metaText(cascadia.QueryAll(it, bingVideoMeta)), Kind: KindVideo})
			}
		}
	}
	return hits, cascadia.Query(root, bingNoResults) != nil, ""
}

// Google: organic hits are h3 titles inside a link, grouped in div.g (older) or
// div.MjjYud blocks, with the snippet in div.VwiC3b; text ads carry
// [data-text-ad] (title in [role=heading], link through googleadservices' adurl);
// Top stories are a.WlydOe cards; videos sit in <video-voyager>. A page whose
// #topstuff holds a .card-section ("did not match any documents") found nothing.
var (
	googleMarker     = cascadia.MustCompile(`#rso, [data-text-ad], #topstuff ~ #search`)
	googleContainer  = cascadia.MustCompile(`#rso, #topstuff ~ #search, #search [data-async-context]`)
	googleBlocked    = cascadia.MustCompile(`#captcha-form, form[action*="/sorry/"], #recaptcha`)
	googleConsent    = cascadia.MustCompile(`form[action*="consent.google"], #CXQnmb, .HTjtHe`)
	googleNoResults  = cascadia.MustCompile(`#topstuff .card-section, #topstuff [role=heading]`)
	googleSkip       = cascadia.MustCompile(`#rhs, #searchform, #top_nav, #hdtb, .related-question-pair, #bres, #foot, .usJj9c, .HiHjCd`)
	googleAd         = cascadia.MustCompile(`[data-text-ad]`)
	googleNews       = cascadia.MustCompile(`a.WlydOe`)
	googleHeading    = cascadia.MustCompile(`[role=heading], h3`)
	googleSnippet    = cascadia.MustCompile(`.VwiC3b, [data-sncf="1"], div[style*="-webkit-line-clamp"], .IsZvec`)
	googleAdSnippet  = cascadia.MustCompile(`.MUxGbd.yDYNvb, .Va3FIb, .yDYNvb`)
	googleNewsTitle  = cascadia.MustCompile(`.n0jPhd, [role=heading]`)
	googleNewsDesc   = cascadia.MustCompile(`.GI74Re, .UqSP2b`)
	googleVideoTitle = cascadia.MustCompile(`h3, [role=heading], .fc9yUc`)
	googleVideoMeta  = cascadia.MustCompile(`.pcJO7e, .gqF9jc, .Sg4azc`)
)

func parseGoogle(doc *html.Node, base *url.URL) ([]Hit, bool, string) {
	if base != nil && strings.HasPrefix(base.Path, "/sorry/") || cascadia.Query(doc, googleBlocked) != nil {
		return nil, false, "captcha (unusual traffic)"
	}
	if base != nil && strings.HasPrefix(strings.ToLower(base.Hostname()), "consent.") || cascadia.Query(doc, googleConsent) != nil {
		return nil, false, "consent wall"
	}
	if cascadia.Query(doc, googleContainer) == nil {
		return nil, false, "no results container (#search)"
	}
	body := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body == nil {
		body = doc
	}
	link := func(n *html.Node) *html.Node {
		if isAnchor(n) && hasAttr(n, "href") {
			return n
		}
		return findFirst(n, func(c *html.Node) bool { return isAnchor(c) && hasAttr(c, "href") })
	}
	var hits []Hit
	walkSkip(body, func(n *html.Node) bool {
		switch {
		case googleSkip.Match(n):
			return true
		case googleAd.Match(n):
			a := link(n)
			if a == nil {
				return true
			}
			title := queryText(n, googleHeading)
			hits = append(hits, Hit{Title: title, URL: hitURL(base, attr(a, "href")), Snippet: queryText(n, googleAdSnippet), Kind: KindAd})
			return true
		case googleNews.Match(n):
			hits = append(hits, Hit{Title: queryText(n, googleNewsTitle), URL: hitURL(base, attr(n, "href")), Snippet: queryText(n, googleNewsDesc), Kind: KindNews})
			return true
		case n.Data == "video-voyager":
			a := link(n)
			if a == nil {
				return true
			}
			hits = append(hits, Hit{Title: queryText(n, googleVideoTitle), URL: hitURL(base, attr(a, "href")), Snippet: queryText(n, googleVideoMeta), Kind: KindVideo})
			return true
		case n.DataAtom == atom.H3:
			// The title of an organic result: the link around it (or, in older
			// markup, inside it).
			var a *html.Node
			for p := n.Parent; p != nil && a == nil; p = p.Parent {
				if isAnchor(p) && hasAttr(p, "href") {
					a = p
				}
			}
			if a == nil {
				a = link(n)
			}
			if a == nil {
				return true
			}
			hits = append(hits, Hit{Title: textContent(n), URL: hitURL(base, attr(a, "href")), Snippet: googleOrganicSnippet(n), Kind: KindOrganic})
			return true
		}
		return false
	})
	return hits, cascadia.Query(doc, googleNoResults) != nil, ""
}

// googleOrganicSnippet finds the snippet of the result titled h3: in the smallest
// ancestor block that has one, without climbing into a block holding another
// result's title.
func googleOrganicSnippet(h3 *html.Node) string {
	for p := h3.Parent; p != nil && p.DataAtom != atom.Body; p = p.Parent {
		if countUpTo(p, 2, func(n *html.Node) bool { return n.DataAtom == atom.H3 }) > 1 {
			break
		}
		if s := cascadia.Query(p, googleSnippet); s != nil {
			return textContent(s)
		}
	}
	return ""
}

// countUpTo counts the elements under n matching match, stopping at limit.
func countUpTo(n *html.Node, limit int, match func(*html.Node) bool) int {
	count := 0
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && match(c) {
				count++
				if count >= limit {
					return true
				}
			}
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(n)
	return count
}

// Brave Search: #results holds div.snippet blocks whose data-type says what they
// are: "web" (link a, title .title / .snippet-title, text .snippet-description),
// "ad", "news" and "videos" (carousels of .card), others (discussions, FAQ …) as
// kind other.
var (
	braveMarker    = cascadia.MustCompile(`#results .snippet[data-type]`)
	braveContainer = cascadia.MustCompile(`#results`)
	braveBlocked   = cascadia.MustCompile(`#captcha, form[action*="captcha"], .captcha-container`)
	braveNoResults = cascadia.MustCompile(`#no-results, .no-results, [data-type="no-results"]`)
	braveSnippet   = cascadia.MustCompile(`.snippet[data-type]`)
	braveTitle     = cascadia.MustCompile(`.title, .snippet-title, .search-snippet-title`)
	braveDesc      = cascadia.MustCompile(`.snippet-description, .generic-snippet .content, .snippet-content .description, .description`)
	braveCard      = cascadia.MustCompile(`.card`)
	braveCardDesc  = cascadia.MustCompile(`.card-footer, .description, .snippet-description`)
)

func parseBrave(doc *html.Node, base *url.URL) ([]Hit, bool, string) {
	if cascadia.Query(doc, braveBlocked) != nil {
		return nil, false, "captcha"
	}
	root := cascadia.Query(doc, braveContainer)
	if root == nil {
		return nil, false, "no results container (#results)"
	}
	var hits []Hit
	for _, s := range cascadia.QueryAll(root, braveSnippet) {
		if p := s.Parent; p != nil && closest(p, braveSnippet) != nil {
			continue // nested in another snippet
		}
		kind := KindOther
		switch strings.ToLower(attr(s, "data-type")) {
		case "web":
			kind = KindOrganic
		case "ad", "ads":
			kind = KindAd
		case "news":
			kind = KindNews
		case "videos", "video":
			kind = KindVideo
		}
		if cards := cascadia.QueryAll(s, braveCard); len(cards) > 0 && kind != KindOrganic && kind != KindAd {
			for _, c := range cards {
				a := c
				if !isAnchor(a) {
					a = findFirst(c, func(n *html.Node) bool { return isAnchor(n) && hasAttr(n, "href") })
				}
				if a == nil {
					continue
				}
				snippet := ""
				if d := cascadia.Query(c, braveCardDesc); d != nil {
					snippet = metaText([]*html.Node{d})
				}
				hits = append(hits, Hit{Title: queryText(c, braveTitle), URL: hitURL(base, attr(a, "href")), Snippet: snippet, Kind: kind})
			}
			continue
		}
		a := findFirst(s, func(n *html.Node) bool { return isAnchor(n) && hasAttr(n, "href") })
		if a == nil {
			continue
		}
		title := queryText(s, braveTitle)
		if title == "" {
			title = textContent(a)
		}
		hits = append(hits, Hit{Title: title, URL: hitURL(base, attr(a, "href")), Snippet: queryText(s, braveDesc), Kind: kind})
	}
	return hits, cascadia.Query(root, braveNoResults) != nil || cascadia.Query(doc, braveNoResults) != nil, ""
}
