package commands

import (
	"context"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "eval",
		Category: catBrowser,
		Usage:    "evaluate JavaScript in the page and print its value as JSON",
		UsageText: `dtb eval EXPR | dtb eval --file F | dtb eval -   (reads stdin)

Promises are awaited (--no-await to get them as {}); the value is returned by value
as JSON (undefined prints null; NaN, Infinity and bigints print as strings). An
exception is "threw" (exit 1) with message, line, column and url. A script still
running when --timeout passes is stopped (timeout, exit 4, "terminated": true), so
the tab answers again.

Examples:
  dtb eval document.title -r
  dtb eval 'fetch("/api/health").then(r => r.status)'
  echo 'location.href' | dtb eval - --tab t2`,
		Flags: pageFlags(
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the expression from `FILE`"},
			&cli.BoolFlag{Name: "no-await", Usage: "do not await a returned promise"},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			expr, err := evalSource(c, inv)
			if err != nil {
				return nil, err
			}
			return withGuardedPage(c, inv, pageMode{stopScript: true}, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
				// The ceiling applies to the page's answer too: a huge value is
				// refused as it arrives, not decoded and copied first.
				return p.EvaluateLimited(ctx, expr, !c.Bool("no-await"), inv.printer.MaxBytes())
			})
		}),
	})
}

func evalSource(c *cli.Context, inv *invocation) (string, error) {
	file := c.String("file")
	switch {
	case file != "" && c.NArg() > 0:
		return "", output.Usage("eval takes an expression or --file, not both")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", output.Wrap("no-such-file", err, "cannot read --file").With("path", file)
		}
		return string(b), nil
	case c.NArg() == 1 && c.Args().First() == "-":
		b, err := io.ReadAll(inv.io.Stdin)
		if err != nil {
			return "", output.Wrap("io-error", err, "cannot read stdin")
		}
		return string(b), nil
	case c.NArg() == 1:
		return c.Args().First(), nil
	case c.NArg() > 1:
		return "", output.Usage("eval wants one expression (quote it), got %d arguments", c.NArg())
	}
	return "", output.Usage("eval wants an expression, --file F, or - for stdin")
}
