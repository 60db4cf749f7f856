package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// catDropTarget groups drag's --to-… flags in its help.
const catDropTarget = "Drop target"

func init() {
	register(&cli.Command{
		Name:     "drag",
		Category: catBrowser,
		Usage:    "drag an element onto another with real mouse events (HTML5 drag and drop included)",
		UsageText: `dtb drag [SOURCE] [TARGET] [locator flags] [--to-… target locator flags] [--steps N] [--force]

SOURCE and TARGET are each a CSS selector or an @eN ref, or the locator flags:
--role, --text, --label … name the element to drag, the same flags with --to-
(--to-role, --to-text, --to-label …) the element to drop it on. Positional
arguments fill the ends that have no flags, source first.

Both ends are scrolled into view and checked as click checks them (stable box,
nothing covering the point; --force skips that). dtb presses the mouse on the
source's centre, moves it in --steps steps to the target's centre and releases
it. When the page starts an HTML5 drag (draggable="true"), dtb delivers
dragenter, dragover and drop at the target with the page's own drag data. Exit 0
only when the drop happened: a drop event reached the target, or, for a
mouse-driven drag, the mouse was released over it; otherwise not-dropped
(exit 1) with the events the target saw.

Examples:
  dtb drag '#card1' '#bin'
  dtb drag --text 'Card 1' --to-label Bin
  dtb drag @e4 @e9 --steps 20
  dtb drag --role listitem --name 'Write docs' --to-role region --to-name Done`,
		Flags: interactFlags(append([]cli.Flag{
			&cli.IntFlag{Name: "steps", Value: 10, Usage: "intermediate mouse moves `N` between the ends (1 to 200)"},
			&cli.BoolFlag{Name: "force", Usage: "drag even when another element covers either end"},
		}, prefixedLocatorFlags("to-", "drop target: ", catDropTarget)...)...),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			args := positionals(c)
			if len(args) > 2 {
				return nil, output.Usage("drag takes a source and a target (quote a selector with spaces), got %d arguments", len(args))
			}
			// Positionals go to the ends the flags leave open, source first.
			src, err := locatorFrom(c, "")
			if err != nil {
				return nil, err
			}
			dst, err := prefixedLocatorFrom(c, "to-", "")
			if err != nil {
				return nil, err
			}
			for _, end := range []*interact.Locator{&src, &dst} {
				if len(args) > 0 && end.Empty() {
					if err := end.Positional(args[0]); err != nil {
						return nil, err
					}
					args = args[1:]
				}
			}
			if len(args) > 0 {
				return nil, output.Usage("drag: both ends are named by flags; %q is one argument too many", args[0])
			}
			if src.Empty() {
				return nil, output.Usage("drag needs the element to drag: SOURCE, or --css/--text/--role …")
			}
			if dst.Empty() {
				return nil, output.Usage("drag needs the element to drop on: TARGET, or --to-css/--to-text/--to-role …")
			}
			for _, end := range []*interact.Locator{&src, &dst} {
				if err := end.Validate(); err != nil {
					return nil, err
				}
			}
			if n := c.Int("steps"); n < 1 || n > 200 {
				return nil, output.Usage("--steps must be between 1 and 200, not %d", n)
			}
			o := interact.DragOptions{Steps: c.Int("steps"), Force: c.Bool("force"), Settle: settleFrom(c)}
			return withInteract(c, inv, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
				return pg.Drag(ctx, src, dst, o)
			})
		}),
	})
}
