package extract

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// lazySrcAttrs name the attributes lazy loaders keep an image's URL in until
// it scrolls into view, most specific first.
var lazySrcAttrs = []string{"data-src", "data-lazy-src", "data-original", "data-lazy", "data-url", "data-hi-res-src", "data-full-src"}

// srcsetAttrs hold srcsets: the image's own, then lazy loaders' ones.
var srcsetAttrs = []string{"srcset", "data-srcset", "data-lazy-srcset"}

// imageURL matches an attribute value that is an image URL (as readability's
// lazy-image pass matches them).
var imageURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\s*\S+\.(jpe?g|png|webp|gif|avif)(\?\S*)?\s*$`) })

// imageSource is the URL an <img> shows once loaded: its src, unless that is
// empty or a tiny data: placeholder, else the best candidate of its srcset, its
// lazy-loading attributes, its <picture>'s sources or the image of the
// <noscript> after it. "" when it has none.
func imageSource(img *html.Node) string {
	src := strings.TrimSpace(attr(img, "src"))
	if src != "" && !placeholderSrc(src) {
		return src
	}
	for _, k := range lazySrcAttrs {
		if v := strings.TrimSpace(attr(img, k)); v != "" {
			return v
		}
	}
	for _, k := range srcsetAttrs {
		if v := bestSrcset(attr(img, k)); v != "" {
			return v
		}
	}
	for _, a := range img.Attr {
		if a.Namespace == "" && strings.HasPrefix(a.Key, "data-") && imageURL().MatchString(a.Val) {
			return strings.TrimSpace(a.Val)
		}
	}
	if p := img.Parent; p != nil && p.DataAtom == atom.Picture {
		for s := p.FirstChild; s != nil; s = s.NextSibling {
			if s.DataAtom == atom.Source {
				for _, k := range srcsetAttrs {
					if v := bestSrcset(attr(s, k)); v != "" {
						return v
					}
				}
			}
		}
	}
	if ns := nextElement(img); ns != nil && ns.DataAtom == atom.Noscript {
		if ni := noscriptImage(ns); ni != nil {
			if v := strings.TrimSpace(attr(ni, "src")); v != "" {
				return v
			}
			return bestSrcset(attr(ni, "srcset"))
		}
	}
	return src
}

// placeholderSrc reports a data: URL too small to be the picture (a
// transparent pixel a lazy loader replaces); SVG can mean something that small.
func placeholderSrc(src string) bool {
	l := strings.ToLower(src)
	return strings.HasPrefix(l, "data:") && !strings.HasPrefix(l, "data:image/svg") && len(src) < 200
}

// bestSrcset is the largest candidate of a srcset (by width descriptor, else
// density), or its only one; "" for an empty srcset.
func bestSrcset(s string) string {
	best, bestSize := "", -1.0
	for s = strings.TrimSpace(s); s != ""; {
		s = strings.TrimLeft(s, " \t\n\r\f,")
		end := strings.IndexAny(s, " \t\n\r\f")
		if end < 0 {
			end = len(s)
		}
		u := s[:end]
		s = s[end:]
		desc := ""
		if strings.HasSuffix(u, ",") {
			u = strings.TrimRight(u, ",")
		} else if i := strings.IndexByte(s, ','); i >= 0 {
			desc, s = s[:i], s[i+1:]
		} else {
			desc, s = s, ""
		}
		if u == "" {
			continue
		}
		size := 0.0
		if d := strings.TrimSpace(desc); len(d) > 1 {
			if n, err := strconv.ParseFloat(d[:len(d)-1], 64); err == nil && (d[len(d)-1] == 'w' || d[len(d)-1] == 'x') {
				size = n
			}
		}
		if size > bestSize {
			best, bestSize = u, size
		}
	}
	return best
}

// noscriptImage is the image a <noscript> holds when that is all it holds. Its
// content is raw text (the page ran with scripts); it is parsed here.
func noscriptImage(ns *html.Node) *html.Node {
	raw := ""
	for c := ns.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			raw += c.Data
		case html.ElementNode:
			// parsed without scripting: the content is markup already
			if c.DataAtom == atom.Img && ns.FirstChild.NextSibling == nil {
				return c
			}
		}
	}
	if !strings.Contains(strings.ToLower(raw), "<img") {
		return nil
	}
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(raw), body)
	if err != nil {
		return nil
	}
	var img *html.Node
	for _, n := range nodes {
		switch {
		case n.Type == html.TextNode && strings.TrimSpace(n.Data) == "":
		case n.Type == html.ElementNode && n.DataAtom == atom.Img && img == nil:
			img = n
		default:
			return nil
		}
	}
	return img
}

func nextElement(n *html.Node) *html.Node {
	for s := n.NextSibling; s != nil; s = s.NextSibling {
		if s.Type == html.ElementNode {
			return s
		}
		if s.Type == html.TextNode && strings.TrimSpace(s.Data) != "" {
			return nil
		}
	}
	return nil
}

// holdsNoscriptImage reports a <noscript> whose (raw) content has an image:
// kept for readability, which puts it in place of a lazy placeholder.
func holdsNoscriptImage(ns *html.Node) bool {
	for c := ns.FirstChild; c != nil; c = c.NextSibling {
		if (c.Type == html.TextNode && strings.Contains(strings.ToLower(c.Data), "<img")) || (c.Type == html.ElementNode && c.DataAtom == atom.Img) {
			return true
		}
	}
	return false
}

// formulaImage reports an image standing for a formula (the fallback image of
// MediaWiki's math, a LaTeX image): its alt text is the formula, and the
// formula is text.
func formulaImage(img *html.Node) bool {
	if strings.TrimSpace(attr(img, "alt")) == "" {
		return false
	}
	if hasAttr(img, "data-dtb-formula") {
		return true
	}
	for _, c := range strings.Fields(strings.ToLower(attr(img, "class"))) {
		if strings.Contains(c, "fallback-image") || strings.Contains(c, "math") || strings.Contains(c, "latex") || c == "tex" {
			return true
		}
	}
	return img.Parent != nil && findFirst(img.Parent, func(n *html.Node) bool { return n.Namespace == "math" && n.Data == "math" }) != nil
}

// prepareImages gives every image the source it shows once loaded (see
// imageSource), so that readability and Markdown keep lazy images, and marks
// formula images before readability drops the classes that tell them. It runs
// before prune, while a formula's hidden MathML is still there to be seen.
func prepareImages(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom == atom.Img && c.Namespace == "" {
			if src := imageSource(c); src != attr(c, "src") {
				setAttr(c, "src", src)
			}
			if !hasAttr(c, "data-dtb-formula") && formulaImage(c) {
				c.Attr = append(c.Attr, html.Attribute{Key: "data-dtb-formula"})
			}
		}
		prepareImages(c)
	}
}
