package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/marker"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// newConverter builds the Markdown converter. Building one costs a few
// microseconds; a fresh one per conversion keeps the concurrent conversions of
// Extract off the shared converter's lock, which it takes for every character it
// escapes.
func newConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithListEndComment(false),
			// An <a> without a usable href (javascript: ones are blanked in
			// prepareMarkdown) renders as its text; one without text disappears.
			commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
			commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
		),
		table.NewTablePlugin(
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithSkipEmptyRows(true),
		),
		strikethrough.NewStrikethroughPlugin(),
	))
	conv.Register.RendererFor("blockquote", converter.TagTypeBlock, renderBlockquote, converter.PriorityEarly)
	return conv
}

// renderBlockquote is commonmark's blockquote renderer, with one fix: the
// library writes a code block's line breaks as a marker it turns into newlines
// only at the end, so its own renderer prefixes only the code block's first
// line with "> " (an open upstream bug). Here the marker is followed by the
// prefix too, as the list renderer does for its indent.
func renderBlockquote(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	var buf bytes.Buffer
	ctx.RenderChildNodes(ctx, &buf, n)
	content := bytes.TrimSpace(buf.Bytes())
	if len(content) == 0 {
		return converter.RenderSuccess
	}
	content = blankLines().ReplaceAll(content, []byte("\n\n"))
	prefixed := make([]byte, 0, len(content)+len(content)/8+2)
	prefixed = append(prefixed, '>', ' ')
	for _, b := range content {
		prefixed = append(prefixed, b)
		if b == '\n' {
			prefixed = append(prefixed, '>', ' ')
		}
	}
	prefixed = bytes.ReplaceAll(prefixed, marker.BytesMarkerCodeBlockNewline, quotedCodeNewline)
	w.WriteString("\n\n")
	w.Write(prefixed)
	w.WriteString("\n\n")
	return converter.RenderSuccess
}

var quotedCodeNewline = append(append([]byte{}, marker.BytesMarkerCodeBlockNewline...), '>', ' ')

// maxDataURI is the longest data: image URL kept in Markdown; longer inline images
// (base64 blobs) would swamp the output and are dropped.
const maxDataURI = 256

// prepareMarkdown strips from a tree about to be converted what would only add noise
// to Markdown: SVG and other embedded content, unnavigable link targets, large
// inline images. The tree is consumed by the conversion, so it is edited in place.
func prepareMarkdown(n *html.Node, pre bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode {
			drop := false
			switch {
			case c.Namespace == "svg":
				drop = true
			case c.Namespace == "":
				switch c.DataAtom {
				case atom.Object, atom.Embed, atom.Canvas, atom.Frame, atom.Frameset, atom.Template:
					drop = c.DataAtom != atom.Template || !isShadowRootTemplate(c)
				case atom.A:
					// The converter resolves even an empty href against the page, so an
					// unnavigable link (javascript:, "#") becomes plain text instead.
					if _, ok := resolveHref(nil, attr(c, "href")); !ok {
						c.Data, c.DataAtom = "span", atom.Span
					} else if textContent(c) == "" && findFirst(c, isImg) == nil {
						// An icon link (<a><svg><title>GitHub</title>…</svg></a>): the
						// SVG goes, its name stays as the link text.
						if t := fallbackText(c); t != "" {
							c.AppendChild(&html.Node{Type: html.TextNode, Data: t})
						}
					}
				case atom.Select:
					// A closed select shows one option, not the list.
					t := &html.Node{Type: html.TextNode, Data: selectedOption(c)}
					n.InsertBefore(t, c)
					drop = true
				case atom.Img:
					s := imageSource(c)
					if strings.HasPrefix(strings.ToLower(s), "data:") && len(s) > maxDataURI {
						s = ""
					}
					setAttr(c, "src", s)
				case atom.Div, atom.Span:
					// Blocks where the page shows blocks; inside preformatted
					// text everything stays inline.
					switch attr(c, "data-dtb-display") {
					case "block":
						if !pre {
							c.Data, c.DataAtom = "div", atom.Div
						}
					case "inline":
						c.Data, c.DataAtom = "span", atom.Span
					}
				}
			}
			if l := headingLevel(c); l > 0 && tagLevel(c.DataAtom) != min(l, 6) {
				// role=heading, or an aria-level that overrides the tag.
				h := headingAtoms[min(l, 6)-1]
				c.Data, c.DataAtom = h.String(), h
			}
			if drop {
				n.RemoveChild(c)
				c = next
				continue
			}
			if inlineBox(c.DataAtom) && c.Namespace == "" {
				// Adjacent boxes (<a>Home</a><a>About</a>) are apart on screen.
				if p := c.PrevSibling; p != nil && p.Type == html.ElementNode && inlineBox(p.DataAtom) {
					n.InsertBefore(&html.Node{Type: html.TextNode, Data: " "}, c)
				}
			}
		}
		if c.FirstChild != nil {
			prepareMarkdown(c, pre || (c.Namespace == "" && (c.DataAtom == atom.Pre || c.DataAtom == atom.Listing || c.DataAtom == atom.Xmp)))
		}
		c = next
	}
}

func isImg(n *html.Node) bool { return n.DataAtom == atom.Img && n.Namespace == "" }

var headingAtoms = [6]atom.Atom{atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6}

// setAttr sets (or adds) the attribute key of n.
func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Namespace == "" && n.Attr[i].Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

var blankLines = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`) })

// toMarkdown converts (and consumes) a tree, resolving relative URLs against base.
func toMarkdown(n *html.Node, base *url.URL) (md string, err error) {
	defer recoverAs(&err, "markdown conversion")
	prepareMarkdown(n, false)
	var opts []converter.ConvertOptionFunc
	if base != nil {
		opts = append(opts, converter.WithDomain(base.String()))
	}
	out, err := newConverter().ConvertNode(n, opts...)
	if err != nil {
		return "", err
	}
	return compactMarkdown(string(out)), nil
}

// recoverAs turns a panic in a third-party converter into an error: a page that
// trips one must cost a field and a warning, not the process.
func recoverAs(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s failed: %v", what, r)
	}
}

// compactMarkdown trims trailing blanks and squeezes runs of blank lines to one.
func compactMarkdown(s string) string {
	s = blankLines().ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
