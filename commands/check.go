package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	for _, want := range []bool{true, false} {
		name, usage := "check", "check a checkbox, radio button or switch (idempotent; prints the final state)"
		if !want {
			name, usage = "uncheck", "uncheck a checkbox or switch (idempotent; prints the final state)"
		}
		register(&cli.Command{
			Name:     name,
			Category: catBrowser,
			Usage:    usage,
			UsageText: `dtb ` + name + ` [SELECTOR|@eN] [locator flags]

Works on native checkboxes, radio buttons and options (hidden ones too, or through
their label) and on every ARIA role with a checked or selected state: checkbox,
radio, switch, menuitemcheckbox, menuitemradio (aria-checked), option and treeitem
(aria-selected), and toggle buttons (aria-pressed). It clicks the element and
waits briefly for the page to show the new state. Does nothing when the state
already is the wanted one; prints {checked, changed}. Another role fails
not-checkable naming it.

Examples:
  dtb ` + name + ` --label 'Remember me'
  dtb ` + name + ` --role switch --name 'Dark mode'
  dtb ` + name + ` --role treeitem --name src`,
			Flags: interactFlags(),
			Action: action(func(c *cli.Context, inv *invocation) (any, error) {
				if c.NArg() > 1 {
					return nil, output.Usage("%s takes one element, got %d arguments", name, c.NArg())
				}
				loc, err := elementFrom(c, c.Args().First(), true)
				if err != nil {
					return nil, err
				}
				return withInteract(c, inv, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
					return pg.Check(ctx, loc, want, settleFrom(c))
				})
			}),
		})
	}
}
