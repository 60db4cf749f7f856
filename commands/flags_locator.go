package commands

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/cdp/interact"
	"github.com/dtb-cli/dtb/internal/output"
)

const catLocator = "Locator"

// locatorFlags are the flags that name an element, shared by every
// interaction command (and screenshot --element).
func locatorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "css", Usage: "CSS `SELECTOR` (matched in each open shadow root and frame)", Category: catLocator},
		&cli.StringFlag{Name: "text", Usage: "visible `TEXT` (substring, case-insensitive; --exact for the whole text)", Category: catLocator},
		&cli.StringFlag{Name: "role", Usage: "ARIA `ROLE` as the accessibility tree computes it (button, link, textbox, checkbox …)", Category: catLocator},
		&cli.StringFlag{Name: "name", Usage: "accessible `NAME` of --role (substring unless --exact)", Category: catLocator},
		&cli.StringFlag{Name: "label", Usage: "form control by its label `TEXT` (<label>, aria-label, aria-labelledby)", Category: catLocator},
		&cli.StringFlag{Name: "placeholder", Usage: "input by its placeholder `TEXT`", Category: catLocator},
		&cli.BoolFlag{Name: "exact", Usage: "--text, --name, --label, --placeholder match the whole text, case-sensitively", Category: catLocator},
		&cli.StringFlag{Name: "ref", Usage: "element `eN` from the tab's last inspect (also positional @eN)", Category: catLocator},
		&cli.StringFlag{Name: "frame", Usage: "search only in the frame `ID` (frame id from inspect, frame name, or part of its URL)", Category: catLocator},
		&cli.Float64Flag{Name: "x", Usage: "the element at viewport point `X` (with --y)", Category: catLocator},
		&cli.Float64Flag{Name: "y", Usage: "the element at viewport point `Y` (with --x)", Category: catLocator},
		&cli.BoolFlag{Name: "document", Usage: "--x/--y are document coordinates (dtb scrolls them into view)", Category: catLocator},
		&cli.IntFlag{Name: "nth", Usage: "pick match `N` of several, counting from 0 in document order", Category: catLocator},
		&cli.StringFlag{Name: "within", Usage: "only matches inside the smallest card, row or section that also shows `TEXT` (an exact text match wins)", Category: catLocator},
	}
}

// settleFlags say how long an action watches the page afterwards.
func settleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "settle", Value: interact.DefaultSettle.Quiet, Usage: "after the action, wait for the DOM to stay unchanged this `LONG` (0 to skip); by default the wait also ends as soon as the page is idle: two animation frames without a DOM change, no navigation pending, no fetch/XHR in flight", EnvVars: []string{"DTB_SETTLE"}},
		&cli.DurationFlag{Name: "settle-cap", Value: interact.DefaultSettle.Cap, Usage: "wait at most this `LONG` for quiet and a started navigation (never a failure)", EnvVars: []string{"DTB_SETTLE_CAP"}},
	}
}

func settleFrom(c *cli.Context) interact.Settle {
	s := interact.Settle{Quiet: c.Duration("settle"), Cap: c.Duration("settle-cap")}
	// An explicit --settle is a quiet window the caller wants in full.
	if !c.IsSet("settle") {
		s.Frames = interact.DefaultSettle.Frames
	}
	return s
}

// interactFlags: the command's own flags, the locator, settle and browser flags.
func interactFlags(own ...cli.Flag) []cli.Flag {
	f := append(own, locatorFlags()...)
	f = append(f, settleFlags()...)
	return withBrowserFlags(f...)
}

// locatorFrom builds the locator from the flags and an optional positional
// shorthand: "@e3" is a ref, anything else a CSS selector.
func locatorFrom(c *cli.Context, positional string) (interact.Locator, error) {
	l := interact.Locator{
		CSS:         c.String("css"),
		Text:        c.String("text"),
		Role:        c.String("role"),
		Name:        c.String("name"),
		Label:       c.String("label"),
		Placeholder: c.String("placeholder"),
		Exact:       c.Bool("exact"),
		Ref:         c.String("ref"),
		Frame:       c.String("frame"),
		Document:    c.Bool("document"),
		Within:      c.String("within"),
		Nth:         interact.NoNth,
	}
	if c.IsSet("x") {
		x := c.Float64("x")
		l.X = &x
	}
	if c.IsSet("y") {
		y := c.Float64("y")
		l.Y = &y
	}
	if c.IsSet("nth") {
		l.Nth = c.Int("nth")
		if l.Nth < 0 {
			return l, output.Usage("--nth counts from 0")
		}
	}
	if positional != "" {
		if !l.Empty() {
			return l, output.Usage("give the element once: %q and %s", positional, l.String())
		}
		if err := l.Positional(positional); err != nil {
			return l, err
		}
	}
	l.Ref = strings.TrimPrefix(l.Ref, "@")
	return l, nil
}

// elementFrom is locatorFrom checked before any work is done: a required
// element must be named, and any locator flag given must name one validly (a
// lone --name, --within or --nth is a usage error, not silently ignored).
func elementFrom(c *cli.Context, positional string, required bool) (interact.Locator, error) {
	l, err := locatorFrom(c, positional)
	if err == nil && (required || l != interact.Locator{Nth: interact.NoNth}) {
		err = l.Validate()
	}
	return l, err
}

// leadingRef splits a leading @eN off the positionals of a command whose other
// positionals are values (select's options, upload's files).
func leadingRef(args []string) (ref string, rest []string) {
	if len(args) > 0 && strings.HasPrefix(args[0], "@") {
		return args[0], args[1:]
	}
	return "", args
}

// withInteract runs fn with an interact.Page on the selected tab, the
// session's refs loaded.
func withInteract(c *cli.Context, inv *invocation, fn func(ctx context.Context, sess *cdp.Session, pg *interact.Page) (any, error)) (any, error) {
	return withPage(c, inv, func(ctx context.Context, sess *cdp.Session, p *cdp.Page) (any, error) {
		pg := interactPage(sess, p)
		defer pg.Close()
		return fn(ctx, sess, pg)
	})
}

// interactPage is the interaction view of a tab, with the session's refs loaded
// so @eN locators resolve. The caller closes it.
func interactPage(sess *cdp.Session, p *cdp.Page) *interact.Page {
	pg := interact.New(p, p.ID)
	pg.Refs = interact.LoadRefs(sess.State())
	return pg
}

// positionals returns the command's positional arguments.
func positionals(c *cli.Context) []string { return c.Args().Slice() }
