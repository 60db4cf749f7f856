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
		Name:     "wait",
		Category: catBrowser,
		Usage:    "wait until every given condition holds (load, element, gone, URL, DOM quiet, JS)",
		UsageText: `dtb wait [--load] [--css S | --text T | --role R [--name N] | --label L | --placeholder P] [--gone]
         [--url PATTERN] [--quiet DURATION] [--js EXPR] [--timeout D]

All the conditions given must hold at once. An element condition holds when a
visible element matches (with --gone: when none does). --url matches a substring,
or a glob with * and ? over the whole URL. --quiet: the DOM stayed unchanged that
long. --js: the expression is truthy (promises awaited). Prints what held and how
long it took; at --timeout fails "timeout" (exit 4) with what it last observed.
A tab whose main thread a script of the page's keeps busy (other commands fail
page-unresponsive at once) is waited for too.

Examples:
  dtb wait --load
  dtb wait --text 'Order placed' --timeout 10s
  dtb wait --css '.spinner' --gone
  dtb wait --url '*/checkout/*' --quiet 500ms`,
		Flags: pageFlags(append([]cli.Flag{
			&cli.BoolFlag{Name: "load", Usage: "the document has loaded (readyState complete)"},
			&cli.BoolFlag{Name: "gone", Usage: "the located element is gone (no visible match)"},
			&cli.StringFlag{Name: "url", Usage: "the URL contains `PATTERN` (or matches it as a glob with * and ?)"},
			&cli.DurationFlag{Name: "quiet", Usage: "the DOM stayed unchanged for `DURATION`"},
			&cli.StringFlag{Name: "js", Usage: "the JavaScript `EXPR` is truthy"},
		}, waitLocatorFlags()...)...),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() > 1 {
				return nil, output.Usage("wait takes at most one selector argument")
			}
			loc, err := elementFrom(c, c.Args().First(), false)
			if err != nil {
				return nil, err
			}
			o := interact.WaitOptions{Load: c.Bool("load"), Gone: c.Bool("gone"), URL: c.String("url"), Quiet: c.Duration("quiet"), JS: c.String("js")}
			if !loc.Empty() {
				o.Loc = &loc
			}
			// A tab left busy by a script is waited for: that is what wait
			// is for.
			return withInteractMode(c, inv, pageMode{waitBusy: true}, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
				return pg.Wait(ctx, o)
			})
		}),
	})
}

// waitLocatorFlags are the locator flags that make sense for wait.
func waitLocatorFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range locatorFlags() {
		switch f.Names()[0] {
		case "ref", "x", "y", "document", "nth":
			continue
		}
		out = append(out, f)
	}
	return out
}
