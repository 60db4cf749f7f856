package extract

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// blockBreaks is the number of line breaks a block element puts around its content
// in Text: 2 (a blank line) for paragraph-like blocks, 1 for other blocks, 0 for
// inline elements (custom elements are inline, as in a browser).
func blockBreaks(n *html.Node) int {
	if n.Namespace != "" {
		return 0
	}
	// The page's computed display, where it differs from the tag's (kept when
	// readability renames the element).
	switch attr(n, "data-dtb-display") {
	case "block":
		return 1
	case "inline":
		return 0
	}
	switch n.DataAtom {
	case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Blockquote, atom.Pre, atom.Hr, atom.Table, atom.Listing, atom.Plaintext:
		return 2
	case atom.Address, atom.Article, atom.Aside, atom.Body, atom.Caption, atom.Center,
		atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Dt,
		atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Frameset,
		atom.Header, atom.Hgroup, atom.Html, atom.Legend, atom.Li, atom.Main, atom.Menu,
		atom.Nav, atom.Ol, atom.Optgroup, atom.Search, atom.Section, atom.Summary,
		atom.Tbody, atom.Tfoot, atom.Thead, atom.Tr, atom.Ul, atom.Textarea:
		return 1
	}
	return 0
}

// textBuilder accumulates rendered text the way a browser's innerText does: runs of
// whitespace collapse to one space, block boundaries become line breaks (never more
// than one blank line in a row), table cells are separated by a tab.
type textBuilder struct {
	sb    strings.Builder
	nl    int  // line breaks required before the next text
	sep   byte // separator (' ' or '\t') required before the next text, if no break
	trail int  // line breaks at the end of sb
}

func (t *textBuilder) needBreak(n int) {
	if n > t.nl {
		t.nl = n
	}
}

func (t *textBuilder) needSep(c byte) {
	if t.sep != '\t' {
		t.sep = c
	}
}

// lineBreak is a <br>: one more line break than is pending, at most a blank line.
func (t *textBuilder) lineBreak() {
	eff := max(t.nl, t.trail)
	if eff < 2 {
		t.nl = eff + 1
	}
}

// flush writes the pending break or separator ahead of new text; nothing is written
// at the very start.
func (t *textBuilder) flush() {
	if t.sb.Len() > 0 {
		if t.nl > t.trail {
			for i := t.trail; i < t.nl; i++ {
				t.sb.WriteByte('\n')
			}
			t.trail = t.nl
		} else if t.trail == 0 && t.sep != 0 {
			t.sb.WriteByte(t.sep)
		}
	}
	t.nl, t.sep = 0, 0
}

// writeText adds a text node's data with whitespace collapsed.
func (t *textBuilder) writeText(s string) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		var space bool
		if c < utf8.RuneSelf {
			space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if space {
			if start >= 0 {
				t.writeWord(s[start:i])
				start = -1
			}
			t.needSep(' ')
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		t.writeWord(s[start:])
	}
}

func (t *textBuilder) writeWord(w string) {
	t.flush()
	t.sb.WriteString(w)
	t.trail = 0
}

// writePre adds preformatted text as is.
func (t *textBuilder) writePre(s string) {
	if s == "" {
		return
	}
	t.flush()
	t.sb.WriteString(s)
	n := len(s) - len(strings.TrimRight(s, "\n"))
	if n == len(s) {
		t.trail += n
	} else {
		t.trail = n
	}
}

func (t *textBuilder) len() int { return t.sb.Len() }

// since returns the collapsed text written since offset.
func (t *textBuilder) since(offset int) string {
	return collapseSpace(t.sb.String()[offset:])
}

func (t *textBuilder) String() string {
	return strings.TrimSpace(t.sb.String())
}

// collector walks a pruned tree once and gathers text, links and headings.
type collector struct {
	wantLinks, wantHeadings bool

	tb       textBuilder
	base     *url.URL // links resolve against this (the document's base URL)
	site     *siteMatcher
	links    []Link
	seen     map[Link]struct{}
	headings []Heading
	boxEnd   int  // tb offset at the end of the last inline box (link, button…)
	inHead   bool // inside a heading being collected
}

// newCollector prepares a walk; site is needed only when wantLinks.
func newCollector(site *siteMatcher, wantLinks, wantHeadings bool) *collector {
	return &collector{site: site, wantLinks: wantLinks, wantHeadings: wantHeadings, seen: map[Link]struct{}{}, boxEnd: -1}
}

// takeText returns the text gathered so far and starts a new one (for the next
// frame); links and headings keep accumulating.
func (c *collector) takeText() string {
	s := c.tb.String()
	c.tb = textBuilder{}
	c.boxEnd = -1
	return s
}

// inlineBox reports elements that render as separate boxes inside a line: adjacent
// ones (<a>Home</a><a>About</a>) are separated by a space in Text, as their padding
// or margin separates them on screen.
func inlineBox(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Button, atom.Label, atom.Select, atom.Input, atom.Img:
		return true
	}
	return false
}

func (c *collector) walk(n *html.Node, pre bool) {
	switch n.Type {
	case html.TextNode:
		if pre {
			c.tb.writePre(n.Data)
		} else {
			c.tb.writeText(n.Data)
		}
		return
	case html.ElementNode:
	case html.DocumentNode:
		c.children(n, pre)
		return
	default:
		return
	}
	if n.Namespace != "" {
		// SVG and MathML: MathML text is visible; SVG text is decoration here.
		if n.Namespace == "math" {
			c.children(n, pre)
		}
		return
	}
	switch n.DataAtom {
	case atom.Head, atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Iframe,
		atom.Frame, atom.Object, atom.Embed, atom.Canvas, atom.Video, atom.Audio,
		atom.Datalist, atom.Option, atom.Meta, atom.Link, atom.Base, atom.Map:
		if n.DataAtom == atom.Map && c.wantLinks {
			c.areas(n)
		}
		return
	case atom.Template:
		if !isShadowRootTemplate(n) {
			return
		}
	case atom.Br:
		c.tb.lineBreak()
		return
	case atom.Wbr:
		return
	case atom.Td, atom.Th:
		for p := n.PrevSibling; p != nil; p = p.PrevSibling {
			if p.Type == html.ElementNode && (p.DataAtom == atom.Td || p.DataAtom == atom.Th) {
				c.tb.needSep('\t')
				break
			}
		}
	case atom.Pre, atom.Textarea, atom.Listing, atom.Plaintext:
		pre = true
	}

	box := inlineBox(n.DataAtom)
	if box && c.tb.len() == c.boxEnd {
		c.tb.needSep(' ')
	}
	level := headingLevel(n)
	brk := blockBreaks(n)
	if level > 0 {
		brk = 2
	}
	c.tb.needBreak(brk)

	collectHeading := level > 0 && c.wantHeadings && !c.inHead
	start := c.tb.len()
	if collectHeading {
		c.inHead = true
	}

	switch n.DataAtom {
	case atom.Select:
		c.tb.writeText(selectedOption(n))
	case atom.Input:
		switch strings.ToLower(attr(n, "type")) {
		case "submit", "button", "reset":
			c.tb.writeText(attr(n, "value"))
		}
	case atom.Img:
		if hasAttr(n, "data-dtb-formula") {
			c.tb.writeText(attr(n, "alt"))
		}
	default:
		c.children(n, pre)
	}

	if c.wantLinks && n.DataAtom == atom.A && hasAttr(n, "href") {
		text := c.tb.since(start)
		if text == "" {
			text = fallbackText(n)
		}
		c.addLink(attr(n, "href"), text)
	}
	if collectHeading {
		c.inHead = false
		if text := c.tb.since(start); text != "" {
			c.headings = append(c.headings, Heading{Level: level, Text: text})
		}
	}
	c.tb.needBreak(brk)
	if box {
		c.boxEnd = c.tb.len()
	}
}

func (c *collector) children(n *html.Node, pre bool) {
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c.walk(k, pre)
	}
}

// areas collects the links of an image map's <area href alt> elements.
func (c *collector) areas(m *html.Node) {
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for k := n.FirstChild; k != nil; k = k.NextSibling {
			if k.Type == html.ElementNode && k.DataAtom == atom.Area && hasAttr(k, "href") {
				c.addLink(attr(k, "href"), collapseSpace(attr(k, "alt")))
			}
			walk(k)
		}
	}
	walk(m)
}

// headingLevel is 1–6 for h1–h6 and the aria-level (default 2) of role=heading;
// an explicit role=heading aria-level wins over the tag. 0 for anything else.
func headingLevel(n *html.Node) int {
	if strings.EqualFold(strings.TrimSpace(attr(n, "role")), "heading") {
		if l, err := strconv.Atoi(strings.TrimSpace(attr(n, "aria-level"))); err == nil && l > 0 {
			return l
		}
		if l := tagLevel(n.DataAtom); l > 0 {
			return l
		}
		return 2
	}
	return tagLevel(n.DataAtom)
}

func tagLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// selectedOption is the text a closed <select> shows: its selected option, else its
// first.
func selectedOption(sel *html.Node) string {
	var first, chosen *html.Node
	findFirst(sel, func(n *html.Node) bool {
		if n.DataAtom != atom.Option {
			return false
		}
		if first == nil {
			first = n
		}
		if hasAttr(n, "selected") {
			chosen = n
			return true
		}
		return false
	})
	if chosen == nil {
		chosen = first
	}
	if chosen == nil {
		return ""
	}
	if l := attr(chosen, "label"); l != "" {
		return l
	}
	return textContent(chosen)
}

// fallbackText names a link without text: its aria-label or title, else the first
// image alt, SVG title or aria-label inside it.
func fallbackText(a *html.Node) string {
	for _, k := range []string{"aria-label", "title"} {
		if v := collapseSpace(attr(a, k)); v != "" {
			return v
		}
	}
	var text string
	findFirst(a, func(n *html.Node) bool {
		switch {
		case n.DataAtom == atom.Img && n.Namespace == "":
			text = collapseSpace(attr(n, "alt"))
		case n.Namespace == "svg" && n.Data == "title":
			text = textContent(n)
		default:
			text = collapseSpace(attr(n, "aria-label"))
		}
		return text != ""
	})
	return text
}

// addLink resolves href and records the link unless it is not navigable or a
// duplicate of an earlier (text, href) pair.
func (c *collector) addLink(href, text string) {
	u, ok := resolveHref(c.base, href)
	if !ok {
		return
	}
	l := Link{Text: text, Href: u.String(), SameSite: c.site.same(u)}
	if _, dup := c.seen[l]; dup {
		return
	}
	c.seen[l] = struct{}{}
	c.links = append(c.links, l)
}
