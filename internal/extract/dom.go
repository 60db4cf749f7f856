package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parseHTML parses a serialised page. x/net/html never fails on malformed markup; it
// only reports reader errors, which a strings.Reader cannot produce.
func parseHTML(s string) (*html.Node, error) {
	return html.Parse(strings.NewReader(s))
}

// attr returns the value of the attribute key (lower case) of n, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr reports whether n carries the attribute key, whatever its value.
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

// hasClass reports whether the class attribute of n contains the token c.
func hasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// isShadowRootTemplate reports whether a <template> is a declarative shadow root
// (<template shadowrootmode="open">, or the older shadowroot attribute). Its content
// is rendered, unlike an ordinary template's.
func isShadowRootTemplate(n *html.Node) bool {
	return hasAttr(n, "shadowrootmode") || hasAttr(n, "shadowroot")
}

// prune removes from the tree what never shows on screen, so every consumer (text
// walker, Markdown converter, readability) sees the same visible page: comments,
// script (except JSON-LD, which readability reads for metadata and which no
// consumer renders), style, noscript (except one holding an image, which
// readability unwraps as the image's fallback), ordinary templates, and elements hidden by the
// hidden attribute, an inline display:none / visibility:hidden, or input type=hidden.
// The browser side already filtered by computed style; this is the defensive
// second line for markup that arrives unfiltered (fixtures, raw HTML).
func prune(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if removable(c) {
			n.RemoveChild(c)
		} else if c.FirstChild != nil {
			prune(c)
		}
		c = next
	}
}

func removable(n *html.Node) bool {
	switch n.Type {
	case html.CommentNode:
		return true
	case html.ElementNode:
	default:
		return false
	}
	if n.Namespace == "" {
		switch n.DataAtom {
		case atom.Script:
			return !strings.EqualFold(strings.TrimSpace(attr(n, "type")), "application/ld+json")
		case atom.Style:
			return true
		case atom.Noscript:
			return !holdsNoscriptImage(n)
		case atom.Template:
			return !isShadowRootTemplate(n)
		case atom.Input:
			if strings.EqualFold(attr(n, "type"), "hidden") {
				return true
			}
		}
	}
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "hidden":
			return true
		case "style":
			if styleHides(a.Val) {
				return true
			}
		}
	}
	return false
}

// styleHides reports whether an inline style declares display:none or
// visibility:hidden (or collapse).
func styleHides(style string) bool {
	if !strings.Contains(style, "none") && !strings.Contains(style, "hidden") && !strings.Contains(style, "collapse") {
		return false
	}
	for decl := range strings.SplitSeq(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important")))
		switch {
		case prop == "display" && val == "none":
			return true
		case prop == "visibility" && (val == "hidden" || val == "collapse"):
			return true
		}
	}
	return false
}

// cloneTree deep-copies n. The Markdown converter and readability both rewrite the
// tree they are given; a copy is far cheaper than parsing the HTML again.
func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{
		Type:      n.Type,
		DataAtom:  n.DataAtom,
		Data:      n.Data,
		Namespace: n.Namespace,
	}
	if len(n.Attr) > 0 {
		c.Attr = make([]html.Attribute, len(n.Attr))
		copy(c.Attr, n.Attr)
	}
	var last *html.Node
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		kc := cloneTree(k)
		kc.Parent = c
		if last == nil {
			c.FirstChild = kc
		} else {
			last.NextSibling = kc
			kc.PrevSibling = last
		}
		last = kc
	}
	c.LastChild = last
	return c
}

// findFirst returns the first element in document order for which match is true.
func findFirst(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, match); f != nil {
			return f
		}
	}
	return nil
}

// collapseSpace joins the whitespace-separated fields of s (Unicode spaces, NBSP
// included) with single spaces.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// textContent is the whitespace-collapsed text of root's subtree, block elements
// separated by a space, skipping what prune would remove (for callers that did not
// prune, such as the results-page parsers) and SVG inside root.
func textContent(root *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			if removable(n) || n.DataAtom == atom.Noscript || (n.Namespace == "svg" && n != root) {
				return
			}
		}
		block := n.Type == html.ElementNode && (n.DataAtom == atom.Br || blockBreaks(n) > 0)
		if block {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteByte(' ')
		}
	}
	walk(root)
	return collapseSpace(b.String())
}
