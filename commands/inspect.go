package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// inspectResult is what `dtb inspect` prints: compact lines by default,
// objects with --full.
type inspectResult struct {
	URL      string              `json:"url"`
	Title    string              `json:"title,omitempty"`
	Count    int                 `json:"count"`
	Frames   []interact.FrameRef `json:"frames,omitempty"`
	Elements []string            `json:"elements,omitempty"`
	Items    []interact.Item     `json:"items,omitempty"`
}

func init() {
	register(&cli.Command{
		Name:     "inspect",
		Category: catBrowser,
		Usage:    "list the page's interactive elements with refs (e1 …) and context",
		UsageText: `dtb inspect [--in SELECTOR|@eN] [--within TEXT] [--boxes] [--full]

Lists the interactive elements in document order, frames and open shadow roots
included. Each line is

  REF ROLE[ <tag>][ key=value…][ flags][ frame=fN][ @x,y,wxh]: NAME

(the tag only when the role does not imply it; flags such as checked, disabled,
required; the box with --boxes), and a line "# CONTEXT" precedes each run of
elements that share a context: the nearest heading, or the label or first text of
the card, row or list item they sit in. --full prints objects instead
({ref, role, name, tag, states, hidden, box, ctx, frame}).

Refs are saved in the session for this tab and name exactly the node inspected:
after a navigation, a reload or the node's removal they fail stale-ref (exit 3).
A new inspect of the tab replaces its refs.

Examples:
  dtb inspect
  dtb inspect --within 'Walnut Desk Lamp'
  dtb inspect --full --jq '.items[] | select(.role=="button") | .ref'`,
		Flags: pageFlags(
			&cli.StringFlag{Name: "in", Usage: "only inside the element `SELECTOR` (CSS) or @eN"},
			&cli.StringFlag{Name: "within", Usage: "only inside the smallest card, row or section that shows `TEXT`"},
			&cli.BoolFlag{Name: "boxes", Usage: "add each element's box (@x,y,wxh, viewport CSS px) to its line"},
			&cli.BoolFlag{Name: "full", Usage: "print objects instead of compact lines"},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() > 0 {
				return nil, output.Usage("inspect takes no arguments (scope it with --in or --within)")
			}
			var o interact.InspectOptions
			if in := c.String("in"); in != "" {
				l := interact.Locator{Nth: interact.NoNth}
				if err := l.Positional(in); err != nil {
					return nil, err
				}
				if l.Ref != "" {
					return nil, output.Usage("--in takes a CSS selector (refs change with every inspect)")
				}
				o.In = &l
			}
			o.Within = c.String("within")
			return withInteract(c, inv, func(ctx context.Context, sess *session.Session, pg *interact.Page) (any, error) {
				ins, err := pg.Inspect(ctx, o)
				if err != nil {
					return nil, err
				}
				if err := saveRefs(ctx, sess, pg.TabID(), ins.Refs); err != nil {
					return nil, err
				}
				res := &inspectResult{URL: ins.URL, Title: ins.Title, Count: len(ins.Items), Frames: ins.Frames}
				if c.Bool("full") {
					res.Items = ins.Items
					if res.Items == nil {
						res.Items = []interact.Item{}
					}
				} else {
					res.Elements = ins.Lines(c.Bool("boxes"))
				}
				return res, nil
			})
		}),
	})
}

// saveRefs keeps an inspect's refs for the tab in the session, replacing the
// tab's earlier ones, so that @eN names them.
func saveRefs(ctx context.Context, sess *session.Session, tabID string, refs *interact.TabRefs) error {
	return sess.Update(ctx, func(st *session.State) error {
		interact.StoreRefs(st, tabID, refs)
		return nil
	})
}
