package extract

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"
)

// resolveHref turns an href into an absolute URL against base. It reports
// false for what is not a navigation target: an empty href, a bare "#",
// javascript:, data: and vbscript: URLs, and hrefs that do not parse. mailto:, tel:
// and other schemes are kept as they are (they are never SameSite).
func resolveHref(base *url.URL, href string) (*url.URL, bool) {
	href = strings.TrimSpace(href)
	if href == "" || href == "#" {
		return nil, false
	}
	if i := strings.IndexByte(href, ':'); i > 0 {
		switch strings.ToLower(strings.TrimSpace(href[:i])) {
		case "javascript", "data", "vbscript":
			return nil, false
		}
	}
	u, err := url.Parse(href)
	if err != nil {
		return nil, false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u, true
}

// documentBase is the URL relative links of doc resolve against: the first
// <base href> resolved against the page URL, else the page URL.
func documentBase(doc *html.Node, page *url.URL) *url.URL {
	b := findFirst(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Base && n.Namespace == "" && hasAttr(n, "href")
	})
	if b == nil {
		return page
	}
	u, err := url.Parse(strings.TrimSpace(attr(b, "href")))
	if err != nil {
		return page
	}
	if page != nil {
		u = page.ResolveReference(u)
	}
	if !u.IsAbs() {
		return page
	}
	return u
}

// siteMatcher decides Link.SameSite against the page: http(s) URLs whose
// registrable domain (eTLD+1, from the public suffix list) equals the page's. Hosts
// without one (IP addresses, localhost, single-label names) must match exactly.
// Scheme and port are ignored.
type siteMatcher struct {
	host  string // page host, lower case; "" when the page URL is unusable
	site  string // page registrable domain, "" when it has none
	cache map[string]bool
}

func newSiteMatcher(page *url.URL) *siteMatcher {
	m := &siteMatcher{}
	if page == nil || (page.Scheme != "http" && page.Scheme != "https") {
		return m
	}
	m.host = strings.ToLower(page.Hostname())
	m.site = registrableDomain(m.host)
	return m
}

func registrableDomain(host string) string {
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(strings.TrimSuffix(host, "."))
	if err != nil {
		return ""
	}
	return d
}

func (m *siteMatcher) same(u *url.URL) bool {
	if m.host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := strings.ToLower(u.Hostname())
	if h == m.host {
		return true
	}
	if m.site == "" {
		return false
	}
	same, ok := m.cache[h]
	if !ok {
		same = registrableDomain(h) == m.site
		if m.cache == nil {
			m.cache = map[string]bool{}
		}
		m.cache[h] = same
	}
	return same
}
