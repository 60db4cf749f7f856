package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// pdfResult is what `dtb pdf` prints.
type pdfResult struct {
	Path  string     `json:"path"`
	Bytes int        `json:"bytes"`
	Tab   cdp.TabRef `json:"tab"`
	*cdp.PDF
}

func init() {
	register(&cli.Command{
		Name:     "pdf",
		Category: catBrowser,
		Usage:    "print the page to a PDF file (mode 0600) and print its path",
		UsageText: `dtb pdf [--out FILE] [--paper letter|legal|tabloid|ledger|a3|a4|a5|a6] [--landscape] [--background] [--scale N] [--margin IN] [--pages RANGES]

Prints with the page's print styles. Without --out the PDF goes to a new file under
the user cache directory (dtb/pdf/, or $DTB_CACHE_DIR/pdf/), mode 0600, as
screenshots do; nothing deletes it. The result names the path, paper, size in
inches, orientation and page count. Only headless Chrome prints: a headed browser
fails pdf-unavailable (exit 1).

Examples:
  dtb pdf -r --jq .path
  dtb pdf --out invoice.pdf --paper a4 --background
  dtb pdf --landscape --pages 1-2 --margin 0 --jq .pages`,
		Flags: pageFlags(
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of the cache directory"},
			&cli.StringFlag{Name: "paper", Value: "letter", Usage: "paper `SIZE`: " + cdp.PaperNames(), EnvVars: []string{"DTB_PDF_PAPER"}},
			&cli.BoolFlag{Name: "landscape", Usage: "landscape orientation"},
			&cli.BoolFlag{Name: "background", Usage: "print background colours and images"},
			&cli.Float64Flag{Name: "scale", Value: 1, Usage: "scale `N` of the rendering, 0.1 to 2"},
			&cli.Float64Flag{Name: "margin", Value: -1, Usage: "margin on every side in `INCHES` (default: Chrome's, about 0.4)"},
			&cli.StringFlag{Name: "pages", Usage: "page `RANGES` to print, e.g. 1-3,5 (default: all)"},
			&cli.BoolFlag{Name: "css-page-size", Usage: "use the page's own @page size over --paper"},
		),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			o := cdp.PDFOptions{Paper: c.String("paper"), Landscape: c.Bool("landscape"), Background: c.Bool("background"),
				Scale: c.Float64("scale"), Margin: c.Float64("margin"), PageRanges: c.String("pages"), CSSPage: c.Bool("css-page-size")}
			if _, err := cdp.ParsePaper(o.Paper); err != nil {
				return nil, err
			}
			if c.IsSet("margin") && o.Margin < 0 {
				return nil, output.Usage("--margin must not be negative")
			}
			if o.Scale < 0.1 || o.Scale > 2 {
				return nil, output.Usage("--scale must be between 0.1 and 2, not %g", o.Scale)
			}
			return withPage(c, inv, func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error) {
				doc, err := p.PDF(ctx, o)
				if err != nil {
					return nil, err
				}
				path, err := session.WritePDF(doc, c.String("out"), sess.Name())
				if err != nil {
					return nil, err
				}
				return pdfResult{Path: path, Bytes: len(doc.Data), Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, PDF: doc}, nil
			})
		})),
	})
}
