// Package extract turns a rendered page into what dtb returns for it: visible
// text, a reader view, Markdown, links and headings (Extract), and the hits of a
// search engine's results page (ParseResults). It is pure Go over
// golang.org/x/net/html trees; the browser side supplies the serialised,
// visibility-filtered HTML and the frame contents.
package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Frame is the content of one frame of the page, read separately by the browser
// side. HTML is the frame document's serialised, visibility-filtered markup when
// Read is true; when Read is false, Error says why the frame could not be read.
type Frame struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Origin string `json:"origin,omitempty"`
	HTML   string `json:"-"`
	Read   bool   `json:"read"`
	Error  string `json:"error,omitempty"`
}

// Input is one rendered page: its URL and title, the serialised HTML of the top
// document (hidden elements, scripts and styles already removed; open shadow roots
// inlined) and its frames.
type Input struct {
	URL    string
	Title  string
	HTML   string
	Frames []Frame
}

// Link is a navigable link of the page. Href is absolute. SameSite is true when an
// http(s) Href has the page's registrable domain (eTLD+1); for IP addresses and
// localhost the host must match. mailto:, tel: and other non-http links are kept,
// never SameSite; javascript:, data: and bare "#" links are dropped.
type Link struct {
	Text     string `json:"text"`
	Href     string `json:"href"`
	SameSite bool   `json:"sameSite"`
}

// Heading is an h1–h6 element, or an element with role=heading (level from
// aria-level, default 2).
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
}

// Result is what Extract returns. A field not requested through Options.Include is
// left empty and omitted from JSON; a requested one is always there, empty when
// empty ("text": "", "links": [], "reader": null, with a warning saying why).
// Title, URL and Warnings are always present.
type Result struct {
	Title    string    `json:"title"`
	URL      string    `json:"url"`
	Text     string    `json:"text,omitempty"`
	Reader   *Reader   `json:"reader,omitempty"`
	Markdown string    `json:"markdown,omitempty"`
	Links    []Link    `json:"links,omitempty"`
	Headings []Heading `json:"headings,omitempty"`
	// Frames lists the page's frames (without their HTML) and whether each was read.
	Frames   []Frame  `json:"frames,omitempty"`
	Warnings []string `json:"warnings"`

	// requested are the fields Extract computed (nil: a Result built by hand,
	// whose empty fields are left out).
	requested map[string]bool
}

// MarshalJSON writes the fields in order, each requested one even when empty.
func (r *Result) MarshalJSON() ([]byte, error) {
	out := struct {
		Title    string   `json:"title"`
		URL      string   `json:"url"`
		Text     any      `json:"text,omitempty"`
		Reader   any      `json:"reader,omitempty"`
		Markdown any      `json:"markdown,omitempty"`
		Links    any      `json:"links,omitempty"`
		Headings any      `json:"headings,omitempty"`
		Frames   any      `json:"frames,omitempty"`
		Warnings []string `json:"warnings"`
	}{Title: r.Title, URL: r.URL, Warnings: r.Warnings}
	has := func(field string, empty bool) bool { return r.requested[field] || (r.requested == nil && !empty) }
	if has(FieldText, r.Text == "") {
		out.Text = r.Text
	}
	if has(FieldReader, r.Reader == nil) {
		out.Reader = r.Reader
	}
	if has(FieldMarkdown, r.Markdown == "") {
		out.Markdown = r.Markdown
	}
	if has(FieldLinks, len(r.Links) == 0) {
		out.Links = nonNil(r.Links)
	}
	if has(FieldHeadings, len(r.Headings) == 0) {
		out.Headings = nonNil(r.Headings)
	}
	if has(FieldFrames, len(r.Frames) == 0) {
		out.Frames = nonNil(r.Frames)
	}
	return json.Marshal(out)
}

// nonNil makes an empty list [] rather than null in JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// The field names accepted in Options.Include (the JSON keys of Result).
const (
	FieldText     = "text"
	FieldReader   = "reader"
	FieldMarkdown = "markdown"
	FieldLinks    = "links"
	FieldHeadings = "headings"
	FieldFrames   = "frames"
)

// Fields lists every name Options.Include accepts, in output order.
var Fields = []string{FieldText, FieldReader, FieldMarkdown, FieldLinks, FieldHeadings, FieldFrames}

// ErrUnknownField is wrapped by Extract's error for an Include key not in Fields.
var ErrUnknownField = errors.New("unknown extract field")

// Options tunes Extract.
type Options struct {
	// Include selects the fields to compute, by JSON name (see Fields); nil
	// computes all. Work for fields left out is skipped. Title, URL and Warnings
	// are always returned ("title", "url" and "warnings" are accepted as keys and
	// change nothing); keys mapped to false are ignored; any other key is an
	// error wrapping ErrUnknownField.
	Include map[string]bool
	// MaxChars caps each long string field (Text, Markdown, Reader.Text,
	// Reader.Markdown) at that many characters, followed by the marker
	// "…[truncated N chars]" and a warning; 0 means unlimited.
	MaxChars int
}

func (o Options) wants() (map[string]bool, error) {
	w := make(map[string]bool, len(Fields))
	if o.Include == nil {
		for _, f := range Fields {
			w[f] = true
		}
		return w, nil
	}
	for k, v := range o.Include {
		if k == "title" || k == "url" || k == "warnings" {
			continue // always returned
		}
		if !slices.Contains(Fields, k) {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownField, k, strings.Join(Fields, ", "))
		}
		w[k] = v
	}
	return w, nil
}

// Extract computes the requested fields of a rendered page. The HTML is parsed
// once and shared: Text, Links and Headings come from one walk over it, while the
// Markdown conversion and readability, which rewrite the tree they are given, run
// concurrently on copies. The only error is an unknown Include key.
func Extract(in Input, opts Options) (*Result, error) {
	want, err := opts.wants()
	if err != nil {
		return nil, err
	}
	res := &Result{Title: strings.TrimSpace(in.Title), URL: in.URL, Warnings: []string{}, requested: map[string]bool{}}
	for _, f := range Fields {
		res.requested[f] = want[f]
	}
	warn := func(format string, args ...any) { res.Warnings = append(res.Warnings, fmt.Sprintf(format, args...)) }

	page, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || !page.IsAbs() {
		page = nil
		if want[FieldLinks] || want[FieldMarkdown] || want[FieldReader] {
			warn("page URL %q is not absolute: relative links are left relative", in.URL)
		}
	}

	doc, err := parseHTML(in.HTML)
	if err != nil {
		return nil, err
	}
	prepareImages(doc)
	prune(doc)
	base := documentBase(doc, page)
	if res.Title == "" {
		res.Title = documentTitle(doc)
	}

	// Markdown and readability each rewrite the tree they get, and are the costly
	// parts: they run concurrently on their own trees (copies when the tree is
	// shared) while this goroutine walks the original for text, links and headings
	// and then handles the frames.
	walk := want[FieldText] || want[FieldLinks] || want[FieldHeadings]
	var (
		wg           sync.WaitGroup
		mainMD       string
		mdErr, rdErr error
		reader       *Reader
		freeTree     = !walk // doc itself may go to one consumer
		treeFor      = func() *html.Node {
			if freeTree {
				freeTree = false
				return doc
			}
			return cloneTree(doc)
		}
	)
	// Hand out every tree before any consumer starts rewriting one.
	var mdTree, rdTree *html.Node
	if want[FieldMarkdown] {
		mdTree = treeFor()
	}
	if want[FieldReader] {
		rdTree = treeFor()
	}
	if mdTree != nil {
		wg.Go(func() { mainMD, mdErr = toMarkdown(mdTree, base) })
	}
	if rdTree != nil {
		wg.Go(func() { reader, rdErr = readerView(rdTree, base) })
	}

	var c *collector
	var texts, mds []string
	if walk {
		c = newCollector(newSiteMatcher(page), want[FieldLinks], want[FieldHeadings])
		c.base = base
		c.walk(doc, false)
		texts = append(texts, c.takeText())
	}

	var frameWarnings []string
	fwarn := func(format string, args ...any) { frameWarnings = append(frameWarnings, fmt.Sprintf(format, args...)) }
	for _, f := range in.Frames {
		if want[FieldFrames] {
			res.Frames = append(res.Frames, Frame{ID: f.ID, URL: f.URL, Origin: f.Origin, Read: f.Read, Error: f.Error})
		}
		if !f.Read {
			msg := f.Error
			if msg == "" {
				msg = "not read"
			}
			fwarn("frame %s (%s) not read: %s", f.ID, f.URL, msg)
			continue
		}
		if strings.TrimSpace(f.HTML) == "" || !(walk || want[FieldMarkdown]) {
			continue
		}
		fdoc, err := parseHTML(f.HTML)
		if err != nil {
			fwarn("frame %s (%s): %v", f.ID, f.URL, err)
			continue
		}
		prepareImages(fdoc)
		prune(fdoc)
		// about:blank / about:srcdoc frames (and unusable URLs) resolve against
		// the page, as in the browser.
		fpage, err := url.Parse(f.URL)
		if err != nil || (fpage.Scheme != "http" && fpage.Scheme != "https" && fpage.Scheme != "file") {
			fpage = base
		}
		fbase := documentBase(fdoc, fpage)
		if walk {
			c.base = fbase
			c.walk(fdoc, false)
			texts = append(texts, c.takeText())
		}
		if want[FieldMarkdown] {
			md, err := toMarkdown(fdoc, fbase)
			if err != nil {
				fwarn("markdown of frame %s: %v", f.ID, err)
			}
			if md != "" {
				mds = append(mds, frameSeparator(f)+"\n\n"+md)
			}
		}
	}

	wg.Wait()
	if mdErr != nil {
		warn("markdown: %v", mdErr)
	}
	if want[FieldReader] {
		switch {
		case rdErr != nil:
			warn("reader: %v; reader omitted", rdErr)
		case reader == nil:
			warn(warnNoReader)
		default:
			res.Reader = reader
		}
	}
	res.Warnings = append(res.Warnings, frameWarnings...)
	mds = append([]string{mainMD}, mds...)

	if want[FieldText] {
		res.Text = joinNonEmpty(texts)
		if res.Text == "" {
			warn(warnNoText)
		}
	}
	if want[FieldMarkdown] {
		res.Markdown = joinNonEmpty(mds)
		if res.Markdown == "" && !(want[FieldText] && res.Text == "") {
			warn("markdown: the page converts to no Markdown; markdown is empty")
		}
	}
	if c != nil {
		if want[FieldLinks] {
			res.Links = c.links
		}
		if want[FieldHeadings] {
			res.Headings = c.headings
		}
	}

	if n := opts.MaxChars; n > 0 {
		truncate(&res.Text, n, "text", warn)
		truncate(&res.Markdown, n, "markdown", warn)
		if res.Reader != nil {
			truncate(&res.Reader.Text, n, "reader.text", warn)
			truncate(&res.Reader.Markdown, n, "reader.markdown", warn)
		}
	}
	return res, nil
}

// frameSeparator introduces a frame's Markdown: an HTML comment, invisible when the
// Markdown is rendered, naming the frame.
func frameSeparator(f Frame) string {
	s := strings.TrimSpace("frame " + f.ID + " " + f.URL)
	return "<!-- " + strings.ReplaceAll(s, "--", "%2D%2D") + " -->"
}

func joinNonEmpty(parts []string) string {
	parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
	return strings.Join(parts, "\n\n")
}

// TruncationMarker formats the marker that ends a field cut by MaxChars.
func TruncationMarker(dropped int) string {
	return fmt.Sprintf("…[truncated %d chars]", dropped)
}

// truncate cuts *s to max characters (code points) plus the marker, and warns.
func truncate(s *string, max int, field string, warn func(string, ...any)) {
	if len(*s) <= max { // bytes ≥ characters: short enough
		return
	}
	total := utf8.RuneCountInString(*s)
	if total <= max {
		return
	}
	cut, i := 0, 0
	for i = range *s {
		if cut == max {
			break
		}
		cut++
	}
	*s = (*s)[:i] + TruncationMarker(total-max)
	warn("%s truncated to %d of %d chars", field, max, total)
}

// documentTitle is the text of the document's <title>, for inputs without one.
func documentTitle(doc *html.Node) string {
	t := findFirst(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Title && n.Namespace == ""
	})
	if t == nil {
		return ""
	}
	return textContent(t)
}
