package commands

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

const catLocator = "Locator"

// locatorFlags are the flags that name an element, shared by every
// interaction command (and screenshot --element).
func locatorFlags() []cli.Flag { return prefixedLocatorFlags("", "", catLocator) }

// prefixedLocatorFlags are the locator flags named prefix+name, their usage
// led by lead: the second element of a command (drag's --to-text, --to-role …).
func prefixedLocatorFlags(prefix, lead, category string) []cli.Flag {
	str := func(name, usage string) cli.Flag {
		return &cli.StringFlag{Name: prefix + name, Usage: lead + usage, Category: category}
	}
	boolean := func(name, usage string) cli.Flag {
		return &cli.BoolFlag{Name: prefix + name, Usage: lead + usage, Category: category}
	}
	float := func(name, usage string) cli.Flag {
		return &cli.Float64Flag{Name: prefix + name, Usage: lead + usage, Category: category}
	}
	p := "--" + prefix
	return []cli.Flag{
		str("css", "CSS `SELECTOR` (matched in each open shadow root and frame)"),
		str("text", "visible `TEXT` (substring, case-insensitive; "+p+"exact for the whole text)"),
		str("role", "ARIA `ROLE` as the accessibility tree computes it (button, link, textbox, checkbox …)"),
		str("name", "accessible `NAME` of "+p+"role (substring unless "+p+"exact)"),
		str("label", "form control by its label `TEXT` (<label>, aria-label, aria-labelledby)"),
		str("placeholder", "input by its placeholder `TEXT`"),
		boolean("exact", p+"text, "+p+"name, "+p+"label, "+p+"placeholder match the whole text, case-sensitively"),
		str("ref", "element `eN` from the tab's last inspect (also positional @eN)"),
		str("frame", "search only in the frame `ID` (frame id from inspect, frame name, or part of its URL)"),
		float("x", "the element at viewport point `X` (with "+p+"y)"),
		float("y", "the element at viewport point `Y` (with "+p+"x)"),
		boolean("document", p+"x/"+p+"y are document coordinates (dtb scrolls them into view)"),
		&cli.IntFlag{Name: prefix + "nth", Usage: lead + "pick match `N` of several, counting from 0 in document order", Category: category},
		str("within", "only matches inside the smallest card, row or section that also shows `TEXT` (an exact text match wins)"),
	}
}

// settleFlags say how long an action watches the page afterwards.
func settleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "settle", Value: interact.DefaultSettle.Quiet, Usage: "after the action, wait for the DOM to stay unchanged this `LONG` (0 to skip); by default the wait also ends as soon as the page is idle: no navigation pending, no fetch/XHR in flight, two animation frames without a DOM change (one, when the page asked for no frame), then the main thread idle; through the session host that default wait goes on after the answer (settling: true) when the action started no navigation and no request, and the next command on the tab starts once it ends", EnvVars: []string{"DTB_SETTLE"}},
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
	return pageFlags(f...)
}

// locatorFrom builds the locator from the flags and an optional positional
// shorthand: "@e3" is a ref, anything else a CSS selector.
func locatorFrom(c *cli.Context, positional string) (interact.Locator, error) {
	return prefixedLocatorFrom(c, "", positional)
}

// prefixedLocatorFrom is locatorFrom over the flags of prefixedLocatorFlags.
func prefixedLocatorFrom(c *cli.Context, prefix, positional string) (interact.Locator, error) {
	f := func(name string) string { return prefix + name }
	l := interact.Locator{
		CSS:         c.String(f("css")),
		Text:        c.String(f("text")),
		Role:        c.String(f("role")),
		Name:        c.String(f("name")),
		Label:       c.String(f("label")),
		Placeholder: c.String(f("placeholder")),
		Exact:       c.Bool(f("exact")),
		Ref:         c.String(f("ref")),
		Frame:       c.String(f("frame")),
		Document:    c.Bool(f("document")),
		Within:      c.String(f("within")),
		Nth:         interact.NoNth,
	}
	if c.IsSet(f("x")) {
		x := c.Float64(f("x"))
		l.X = &x
	}
	if c.IsSet(f("y")) {
		y := c.Float64(f("y"))
		l.Y = &y
	}
	if c.IsSet(f("nth")) {
		l.Nth = c.Int(f("nth"))
		if l.Nth < 0 {
			return l, output.Usage("--%s counts from 0", f("nth"))
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
func withInteract(c *cli.Context, inv *invocation, fn func(ctx context.Context, sess *session.Session, pg *interact.Page) (any, error)) (any, error) {
	return withInteractMode(c, inv, pageMode{}, fn)
}

// withInteractMode is withInteract with the page mode of the command.
func withInteractMode(c *cli.Context, inv *invocation, mode pageMode, fn func(ctx context.Context, sess *session.Session, pg *interact.Page) (any, error)) (any, error) {
	return withGuardedPage(c, inv, mode, func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error) {
		pg := interactPage(sess, p)
		defer pg.Close()
		return fn(ctx, sess, pg)
	})
}

// interactPage is the interaction view of a tab, with the session's refs loaded
// so @eN locators resolve. The caller closes it.
func interactPage(sess *session.Session, p *cdp.Page) *interact.Page {
	pg := interact.New(p, p.ID)
	pg.Refs = interact.LoadRefs(sess.State())
	return pg
}

// positionals returns the command's positional arguments.
func positionals(c *cli.Context) []string { return c.Args().Slice() }
