package extract

import (
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Reader is the page's main content as a reader view shows it.
type Reader struct {
	Title    string `json:"title"`
	Byline   string `json:"byline,omitempty"`
	Excerpt  string `json:"excerpt,omitempty"`
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
	// Length is the length of Text in characters (Unicode code points), counted
	// before any MaxChars truncation.
	Length int `json:"length"`
}

// fixAtoms recomputes DataAtom from the tag name: readability renames elements
// (div to p, font to span) and creates new ones by setting Data only.
func fixAtoms(n *html.Node) {
	if n.Type == html.ElementNode && n.Namespace == "" {
		n.DataAtom = atom.Lookup([]byte(n.Data))
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		fixAtoms(c)
	}
}

const (
	warnNoReader = "reader: no main content found; reader is null"
	warnNoText   = "text: the page shows no text; text is empty"
)

// readerView runs readability over doc, which it consumes (readability rewrites the
// tree it scores). It returns nil when readability finds no content.
func readerView(doc *html.Node, base *url.URL) (r *Reader, err error) {
	defer recoverAs(&err, "readability")
	p := readability.NewParser()
	art, err := p.ParseAndMutate(doc, base)
	if err != nil || art.Node == nil {
		return nil, err
	}
	fixAtoms(art.Node)
	c := newCollector(nil, false, false)
	c.walk(art.Node, false)
	text := c.takeText()
	if text == "" {
		return nil, nil
	}
	r = &Reader{
		Title:   strings.TrimSpace(art.Title()),
		Byline:  collapseSpace(art.Byline()),
		Excerpt: collapseSpace(art.Excerpt()),
		Text:    text,
		Length:  utf8.RuneCountInString(text),
	}
	md, err := toMarkdown(art.Node, base)
	if err != nil {
		return nil, err
	}
	r.Markdown = md
	return r, nil
}
