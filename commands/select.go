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
		Name:     "select",
		Category: catBrowser,
		Usage:    "choose options of a <select> by value or label",
		UsageText: `dtb select [@eN] VALUE… [locator flags] [--by-label]

Sets the selection of a native <select> (hidden ones too) and dispatches input and
change. Each VALUE matches an option's value, or else its exact visible label;
--by-label matches labels only (ignoring case). Several values for a multiple select. An option that is not there yet
(loaded late) is waited for until --timeout, then fails no-match listing the
options. The element is given with the locator
flags or a leading @eN; a CSS selector goes in --css.

Examples:
  dtb select --label Country de
  dtb select --css '#size' --by-label Large
  dtb select @e4 red blue`,
		Flags: interactFlags(
			&cli.BoolFlag{Name: "by-label", Usage: "match the options' visible labels instead of their values"},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			ref, args := leadingRef(positionals(c))
			if len(args) == 0 {
				return nil, output.Usage("select wants one or more values")
			}
			loc, err := elementFrom(c, ref, true)
			if err != nil {
				return nil, err
			}
			return withInteract(c, inv, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
				return pg.Select(ctx, loc, args, c.Bool("by-label"), settleFrom(c))
			})
		}),
	})
}
