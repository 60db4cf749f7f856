package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
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
}

func init() {
	register(&cli.Command{
		Name:     "screenshot",
		Category: catBrowser,
		Usage:    "capture the viewport, the full page or a clip to a file (JPEG quality 70 by default)",
		UsageText: `dtb screenshot [--full | --clip x,y,w,h] [--format jpeg|png] [--quality N] [--max-side N] [--out PATH]

Without --out the image goes to a new file under the user cache directory
(dtb/screenshots/, or $DTB_CACHE_DIR/screenshots/), mode 0600; nothing deletes it.
A capture whose longest side exceeds --max-side is scaled down. A page that cannot
be captured in full fails with full-page-screenshot-unavailable instead of
returning the viewport.

Examples:
  dtb screenshot --full -r --jq .path
  dtb screenshot --clip 0,0,800,600 --format png --out shot.png`,
		Flags: withBrowserFlags(
			&cli.BoolFlag{Name: "full", Usage: "capture the whole page, beyond the viewport"},
			&cli.StringFlag{Name: "clip", Usage: "capture the rectangle `x,y,w,h` (CSS px, document coordinates)"},
			&cli.StringFlag{Name: "format", Value: "jpeg", Usage: "`FORMAT`: jpeg or png", EnvVars: []string{"DTB_SCREENSHOT_FORMAT"}},
			&cli.IntFlag{Name: "quality", Value: 70, Usage: "JPEG quality `N` (1–100)"},
			&cli.IntFlag{Name: "max-side", Value: cdp.DefaultMaxSide, Usage: "scale down so that no side exceeds `N` pixels"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `PATH` instead of the cache directory"},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			opts := cdp.ScreenshotOptions{Format: c.String("format"), Quality: c.Int("quality"), Full: c.Bool("full"), MaxSide: c.Int("max-side")}
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
			if opts.MaxSide <= 0 {
				return nil, output.Usage("--max-side must be positive")
			}
			if c.NArg() > 0 {
				return nil, output.Usage("screenshot takes no arguments (use --out PATH)")
			}
			return withPage(c, inv, func(ctx context.Context, sess *cdp.Session, p *cdp.Page) (any, error) {
				shot, err := p.Screenshot(ctx, opts)
				if err != nil {
					return nil, err
				}
				path, err := cdp.WriteScreenshot(shot, c.String("out"), sess.Name())
				if err != nil {
					return nil, err
				}
				return screenshotResult{Path: path, Format: shot.Format, Width: shot.Width, Height: shot.Height, Bytes: len(shot.Data), Scaled: shot.Scaled, Scale: shot.Scale, Mode: shot.Mode, Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}}, nil
			})
		}),
	})
}
