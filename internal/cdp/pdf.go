package cdp

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/dtb-cli/dtb/internal/output"
)

// Paper sizes in inches (width, height, portrait), as Chrome's print dialog
// names them.
var paperSizes = map[string][2]float64{
	"letter":  {8.5, 11},
	"legal":   {8.5, 14},
	"tabloid": {11, 17},
	"ledger":  {17, 11},
	"a3":      {11.69, 16.54},
	"a4":      {8.27, 11.69},
	"a5":      {5.83, 8.27},
	"a6":      {4.13, 5.83},
}

// PaperNames lists the paper sizes for help texts.
func PaperNames() string { return "letter, legal, tabloid, ledger, a3, a4, a5, a6" }

// ParsePaper validates a --paper name ("" is letter).
func ParsePaper(name string) (string, error) {
	paper := strings.ToLower(name)
	if paper == "" {
		paper = "letter"
	}
	if _, ok := paperSizes[paper]; !ok {
		return "", output.Usage("--paper must be one of %s, not %q", PaperNames(), name)
	}
	return paper, nil
}

// PDFOptions configure Page.PDF.
type PDFOptions struct {
	Paper      string  // a name of paperSizes; "" is letter
	Landscape  bool    //
	Background bool    // print background colours and images
	Scale      float64 // 0.1–2; 0 is 1
	Margin     float64 // inches on every side; <0 keeps Chrome's default (about 0.4)
	PageRanges string  // e.g. "1-3,5"; "" is all
	CSSPage    bool    // prefer the page's @page size
}

// PDF is a printed page.
type PDF struct {
	Data       []byte  `json:"-"`
	Paper      string  `json:"paper"`
	Width      float64 `json:"widthInches"`
	Height     float64 `json:"heightInches"`
	Landscape  bool    `json:"landscape"`
	Background bool    `json:"background"`
	Pages      int     `json:"pages"`
}

var pdfPageRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/Type\s*/Page\b[^s]`) })

// PDF prints the tab to PDF. A browser that cannot print (a headed Chrome
// answers "not implemented") is pdf-unavailable.
func (p *Page) PDF(ctx context.Context, o PDFOptions) (*PDF, error) {
	paper, err := ParsePaper(o.Paper)
	if err != nil {
		return nil, err
	}
	size := paperSizes[paper]
	scale := o.Scale
	if scale == 0 {
		scale = 1
	}
	if scale < 0.1 || scale > 2 {
		return nil, output.Usage("--scale must be between 0.1 and 2, not %g", o.Scale)
	}
	params := page.PrintToPDFParams{
		PaperWidth: size[0], PaperHeight: size[1], Landscape: new(o.Landscape),
		PrintBackground: new(o.Background), Scale: scale, PreferCSSPageSize: new(o.CSSPage),
		PageRanges: o.PageRanges,
	}
	if o.Margin >= 0 {
		// Each side its own pointer: 0 is sent, not left to the 1 cm default.
		params.MarginTop, params.MarginBottom, params.MarginLeft, params.MarginRight = new(o.Margin), new(o.Margin), new(o.Margin), new(o.Margin)
	}
	res, err := proto.Call(ctx, p, page.PrintToPDF, params)
	if err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			m := strings.ToLower(pe.Message)
			switch {
			case strings.Contains(m, "range"):
				return nil, output.Usage("--pages %q: %s", o.PageRanges, pe.Message)
			case strings.Contains(m, "not implemented") || strings.Contains(m, "not supported"):
				return nil, output.Wrap("pdf-unavailable", err, "this browser cannot print to PDF (only headless Chrome can; run without --headed)")
			}
		}
		return nil, wrapCDP(ctx, err, "printing to PDF")
	}
	if !bytes.HasPrefix(res.Data, []byte("%PDF-")) {
		return nil, output.Errorf("pdf-unavailable", "the browser returned no PDF")
	}
	w, h := size[0], size[1]
	if o.Landscape {
		w, h = h, w
	}
	return &PDF{Data: res.Data, Paper: paper, Width: w, Height: h, Landscape: o.Landscape, Background: o.Background, Pages: len(pdfPageRE().FindAll(res.Data, -1))}, nil
}
