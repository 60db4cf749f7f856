package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "scroll",
		Category: catBrowser,
		Usage:    "scroll to an element, by --dx/--dy, or --to top|bottom; prints the final position",
		UsageText: `dtb scroll [SELECTOR|@eN] [locator flags] [--dx PX] [--dy PX] [--to top|bottom|left|right]

With only a locator, scrolls the element into view (centred); an element that is
not visible (display: none, no size) fails not-visible (exit 1). With --dx/--dy or --to,
scrolls the page, or the located element as a scroll container. Prints the page's
(or container's) position: {x, y, maxX, maxY, atTop, atBottom}.

Examples:
  dtb scroll --text 'Terms of service'
  dtb scroll --dy 800
  dtb scroll --to bottom
  dtb scroll --css '#feed' --to bottom`,
		Flags: interactFlags(
			&cli.Float64Flag{Name: "dx", Usage: "scroll right by `PX` (negative: left)"},
			&cli.Float64Flag{Name: "dy", Usage: "scroll down by `PX` (negative: up)"},
			&cli.StringFlag{Name: "to", Usage: "scroll to the `EDGE`: top, bottom, left or right"},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() > 1 {
				return nil, output.Usage("scroll takes one element, got %d arguments", c.NArg())
			}
			loc, err := elementFrom(c, c.Args().First(), false)
			if err != nil {
				return nil, err
			}
			o := interact.ScrollOptions{To: c.String("to"), Settle: settleFrom(c)}
			if c.IsSet("dx") {
				v := c.Float64("dx")
				o.DX = &v
			}
			if c.IsSet("dy") {
				v := c.Float64("dy")
				o.DY = &v
			}
			return withInteract(c, inv, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
				return pg.Scroll(ctx, loc, o)
			})
		}),
	})
}
