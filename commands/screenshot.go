package commands

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// screenshotResult is what `dtb screenshot` prints.
type screenshotResult struct {
	Path   string     `json:"path"`
	Format string     `json:"format"`
	Width  int        `json:"width"`
	Height int        `json:"height"`
	Bytes  int        `json:"bytes"`
	Scaled bool       `json:"scaled"`
	Scale  float64    `json:"scale"`
	Mode   string     `json:"mode"`
	Tab    cdp.TabRef `json:"tab"`
	// Element is what --element (or the locator flags) captured.
	Element *interact.Element `json:"element,omitempty"`
	// Annotations are the refs --annotate drew, with their boxes in the
	// image's CSS pixels ([] when it drew none; absent without --annotate).
	Annotations []interact.Annotation `json:"annotations,omitzero"`
}

func init() {
	register(&cli.Command{
		Name:     "screenshot",
		Category: catBrowser,
		Usage:    "capture the viewport, the full page or a clip to a file (JPEG quality 70 by default)",
		UsageText: `dtb screenshot [--full | --clip x,y,w,h | --element SEL | LOCATOR] [--annotate] [--format jpeg|png] [--quality N] [--max-side N] [--out PATH]

Without --out the image goes to a new file under the user cache directory
(dtb/screenshots/, or $DTB_CACHE_DIR/screenshots/), mode 0600; nothing deletes it.
A capture whose longest side exceeds --max-side is scaled down. A page that cannot
be captured in full fails with full-page-screenshot-unavailable instead of
returning the viewport. --element captures one element (a CSS selector or @eN ref
from inspect), as do the locator flags (--role/--name, --text, --label, …): it is
scrolled into view and clipped with --padding pixels around it.

--annotate draws what inspect lists on the image: a box around each visible
interactive element of the viewport (of the page with --full) and its ref (e3)
in a tag. It runs inspect (the refs are saved for this tab as inspect saves
them, so dtb click @e3 acts on what the image shows) and the result lists the
refs drawn: annotations [{ref, role, name, box, frame}], box in the image's CSS
pixels (viewport coordinates, document ones with --full). The overlay is out of
the page's layout and removed after the capture, even a failed one. Not with
--clip or an element.

Examples:
  dtb screenshot --full -r --jq .path
  dtb screenshot --annotate --jq '.annotations[] | [.ref, .name]'
  dtb screenshot --clip 0,0,800,600 --format png --out shot.png
  dtb screenshot --element '#cart' -r --jq .path
  dtb screenshot --role dialog --padding 8 --format png`,
		Flags: pageFlags(append([]cli.Flag{
			&cli.BoolFlag{Name: "full", Usage: "capture the whole page, beyond the viewport"},
			&cli.BoolFlag{Name: "annotate", Usage: "draw inspect's refs (boxes and e1 … tags) on the image and list them"},
			&cli.StringFlag{Name: "clip", Usage: "capture the rectangle `x,y,w,h` (CSS px, document coordinates)"},
			&cli.StringFlag{Name: "format", Value: "jpeg", Usage: "`FORMAT`: jpeg or png (without it, what --out's extension .png, .jpg or .jpeg says)", EnvVars: []string{"DTB_SCREENSHOT_FORMAT"}},
			&cli.IntFlag{Name: "quality", Value: 70, Usage: "JPEG quality `N` (1–100)", EnvVars: []string{"DTB_SCREENSHOT_QUALITY"}},
			&cli.IntFlag{Name: "max-side", Value: cdp.DefaultMaxSide, Usage: "scale down so that no side exceeds `N` pixels", EnvVars: []string{"DTB_SCREENSHOT_MAX_SIDE"}},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `PATH` instead of the cache directory"},
			&cli.StringFlag{Name: "element", Usage: "capture only the element `SEL` (CSS selector, or @eN from inspect)"},
			&cli.IntFlag{Name: "padding", Usage: "with an element, include `PX` pixels around it"},
		}, locatorFlags()...)...),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			format, err := screenshotFormat(c.String("format"), c.IsSet("format"), c.String("out"))
			if err != nil {
				return nil, err
			}
			opts := cdp.ScreenshotOptions{Format: format, Quality: c.Int("quality"), Full: c.Bool("full"), MaxSide: c.Int("max-side")}
			if v := c.String("clip"); v != "" {
				if opts.Full {
					return nil, output.Usage("--full and --clip exclude each other")
				}
				clip, err := cdp.ParseClip(v)
				if err != nil {
					return nil, err
				}
				opts.Clip = clip
			}
			loc, err := elementFrom(c, c.String("element"), false)
			if err != nil {
				return nil, err
			}
			byElement := !loc.Empty()
			if byElement && (opts.Full || opts.Clip != nil) {
				return nil, output.Usage("an element capture excludes --full and --clip")
			}
			annotate := c.Bool("annotate")
			if annotate && (byElement || opts.Clip != nil) {
				return nil, output.Usage("--annotate captures the viewport or, with --full, the page: not with --clip or an element")
			}
			if c.Int("padding") < 0 {
				return nil, output.Usage("--padding must not be negative")
			}
			if opts.MaxSide <= 0 {
				return nil, output.Usage("--max-side must be positive")
			}
			if c.NArg() > 0 {
				return nil, output.Usage("screenshot takes no arguments (use --out PATH, --element SEL)")
			}
			return withPage(c, inv, func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error) {
				var el *interact.Element
				if byElement {
					located, err := locateForCapture(ctx, sess, p, loc)
					if err != nil {
						return nil, err
					}
					el = &located.Element
					opts.Clip = paddedClip(located.PageBox, c.Int("padding"))
				}
				var shot *cdp.Screenshot
				var annotations []interact.Annotation
				var err error
				if annotate {
					shot, annotations, err = annotatedShot(ctx, sess, p, opts)
				} else {
					shot, err = p.Screenshot(ctx, opts)
				}
				if err != nil {
					return nil, err
				}
				path, err := session.WriteScreenshot(shot, c.String("out"), sess.Name())
				if err != nil {
					return nil, err
				}
				return screenshotResult{Path: path, Format: shot.Format, Width: shot.Width, Height: shot.Height, Bytes: len(shot.Data), Scaled: shot.Scaled, Scale: shot.Scale, Mode: shot.Mode, Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, Element: el, Annotations: annotations}, nil
			})
		}),
	})
}

// locateForCapture finds the one element to capture with the shared locator
// (strict: no match and several matches fail as for every interaction).
func locateForCapture(ctx context.Context, sess *session.Session, p *cdp.Page, loc interact.Locator) (*interact.Located, error) {
	pg := interactPage(sess, p)
	defer pg.Close()
	return pg.Locate(ctx, loc, interact.LocateOptions{Scroll: true})
}

// annotatedShot captures the tab with inspect's refs drawn on it and saves
// those refs for the tab, as inspect does.
func annotatedShot(ctx context.Context, sess *session.Session, p *cdp.Page, opts cdp.ScreenshotOptions) (*cdp.Screenshot, []interact.Annotation, error) {
	pg := interactPage(sess, p)
	defer pg.Close()
	var shot *cdp.Screenshot
	ann, err := pg.Annotate(ctx, opts.Full, func(ctx context.Context) (err error) {
		shot, err = p.Screenshot(ctx, opts)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if err := saveRefs(ctx, sess, pg.TabID(), ann.Inspection.Refs); err != nil {
		return nil, nil, err
	}
	return shot, ann.Annotations, nil
}

// paddedClip is an element's document box grown by pad pixels on each side,
// never reaching above or left of the document.
func paddedClip(box [4]int, pad int) *cdp.Clip {
	x, y := float64(box[0]-pad), float64(box[1]-pad)
	w, h := float64(box[2]+2*pad), float64(box[3]+2*pad)
	if x < 0 {
		w += x
		x = 0
	}
	if y < 0 {
		h += y
		y = 0
	}
	return &cdp.Clip{X: x, Y: y, Width: w, Height: h}
}

// formatByExtension is the image format a file name's extension asks for.
var formatByExtension = map[string]string{".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg"}

// screenshotFormat is the format to capture in: the one given (flag or
// variable), else the one --out's extension names (shot.png is a PNG), else
// format's default. A format given that contradicts the extension is a usage
// error rather than JPEG bytes in a .png file.
func screenshotFormat(format string, given bool, out string) (string, error) {
	byExt := formatByExtension[strings.ToLower(filepath.Ext(out))]
	switch {
	case byExt == "":
		return format, nil
	case !given:
		return byExt, nil
	case formatByExtension["."+strings.ToLower(format)] != byExt:
		return "", output.Usage("--format %s contradicts --out %s: drop one, or name the file for the format", format, out)
	}
	return format, nil
}
