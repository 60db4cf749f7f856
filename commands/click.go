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
		Name:     "click",
		Category: catBrowser,
		Usage:    "click an element with a real mouse event at its visible centre",
		UsageText: `dtb click [SELECTOR|@eN] [locator flags] [--button B] [--count 2] [--modifiers M] [--force] [--input-mode dom]

Scrolls the element into view, waits until its box stays the same over two
animation frames, and checks that nothing covers its centre: a hit on the element,
its descendant or an element inside the same link or button counts; under a sticky
header it tries the element at the centre, end and start of the viewport. A cover
that stands still (a consent banner, a modal) fails "covered" within about 0.5 s,
exit 1, naming it; a cover that still moves or fades is waited for until --timeout;
--force clicks anyway. In frames (scaled, rotated, nested) the point is mapped
into the tab's viewport and hit-tested from the top. Then it sends mouse events
through the DevTools protocol. --input-mode dom dispatches
synthetic DOM events instead. Prints the element (role, name, tag, box, frame) and
what happened after: navigation started/committed, the URL, and how long the DOM
took to go quiet.

A click that opens an alert, confirm, prompt or beforeunload dialog returns at once,
exit 0, with "dialog" {type, message, defaultPrompt, open, answer}; --dialog
accept|dismiss answers it (see dtb dialog). A click that opens a file chooser
reports "fileChooser" {multiple, accept} and a hint naming the dtb upload that
answers it.

Locating is strict: no match waits up to --timeout, then fails no-match (exit 3);
several matches fail ambiguous-match (exit 7) unless --nth N picks one.

Examples:
  dtb click '#save'
  dtb click --role button --name Save
  dtb click --role button --name 'Add to cart' --within 'Walnut Desk Lamp'
  dtb click @e12 --jq .after.url`,
		Flags: interactFlags(
			&cli.StringFlag{Name: "button", Value: "left", Usage: "mouse `BUTTON`: left, right or middle"},
			&cli.IntFlag{Name: "count", Value: 1, Usage: "clicks: 2 for a double click"},
			&cli.StringFlag{Name: "modifiers", Usage: "keys held: `LIST` of Control, Shift, Alt, Meta (e.g. Control,Shift)"},
			&cli.BoolFlag{Name: "force", Usage: "click even when another element covers the point"},
			&cli.StringFlag{Name: "input-mode", Value: "cdp", Usage: "`MODE`: cdp (real input events) or dom (synthetic DOM events)", EnvVars: []string{"DTB_INPUT_MODE"}},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			return mouseCommand(c, inv, true)
		}),
	})
	register(&cli.Command{
		Name:     "hover",
		Category: catBrowser,
		Usage:    "move the mouse over an element's visible centre",
		UsageText: `dtb hover [SELECTOR|@eN] [locator flags] [--force] [--input-mode dom]

As click, without pressing: scroll into view, check nothing covers the point,
send a real mouse move.

Examples:
  dtb hover --role menuitem --name Products`,
		Flags: interactFlags(
			&cli.BoolFlag{Name: "force", Usage: "hover even when another element covers the point"},
			&cli.StringFlag{Name: "input-mode", Value: "cdp", Usage: "`MODE`: cdp (real input events) or dom (synthetic DOM events)", EnvVars: []string{"DTB_INPUT_MODE"}},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			return mouseCommand(c, inv, false)
		}),
	})
}

func mouseCommand(c *cli.Context, inv *invocation, click bool) (any, error) {
	args := positionals(c)
	if len(args) > 1 {
		return nil, output.Usage("%s takes one element (quote a selector with spaces), got %d arguments", c.Command.Name, len(args))
	}
	loc, err := elementFrom(c, c.Args().First(), true)
	if err != nil {
		return nil, err
	}
	mode, err := interact.ParseInputMode(c.String("input-mode"))
	if err != nil {
		return nil, err
	}
	o := interact.ClickOptions{Force: c.Bool("force"), Mode: mode, Settle: settleFrom(c)}
	if click {
		o.Button, o.Count = c.String("button"), c.Int("count")
		if o.Modifiers, err = interact.ParseModifiers(c.String("modifiers")); err != nil {
			return nil, err
		}
	}
	return withInteract(c, inv, func(ctx context.Context, sess *session.Session, pg *interact.Page) (any, error) {
		if click {
			o.DownloadDir = sess.DownloadDir()
			return pg.Click(ctx, loc, o)
		}
		return pg.Hover(ctx, loc, o)
	})
}
