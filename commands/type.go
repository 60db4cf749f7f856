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
		Name:     "type",
		Category: catBrowser,
		Usage:    "focus an element and type text into it through the protocol",
		UsageText: `dtb type [SELECTOR|@eN] TEXT [locator flags] [--clear] [--keys] [--submit] [--input-mode dom]

Focuses the element (without a locator: the focused one) and inserts TEXT with
Input.insertText, which works on pages that ignore synthetic events, appending to
what the field holds. --keys sends a real key event per character instead; --clear
replaces the current content; --submit presses Enter afterwards. --input-mode dom
sets the value with synthetic input/change events.

Elements that take no text are refused before anything changes (not-editable,
exit 1): buttons, checkboxes, radios, file inputs, read-only fields, non-numeric
text for a number input. Date, time, datetime-local, month, week, color and range
inputs are set by value (TEXT in the input's format, e.g. 2020-03-02, 13:45,
#12abef), with input and change events. Afterwards the field is read back: when
it does not hold the text (maxlength, a page that rejects it) the command fails
not-typed (exit 1) with what it holds; a page that only reformats it (a phone
mask, upper case) is reported as "formatted". The output never echoes TEXT (only
its length) and never shows a password field's value.

Examples:
  dtb type --label Email ada@example.com
  dtb type '#q' 'walnut lamp' --submit
  dtb type @e7 'new name' --clear
  dtb type --label Birthday 2020-03-02`,
		Flags: interactFlags(
			&cli.BoolFlag{Name: "clear", Usage: "replace the element's current content"},
			&cli.BoolFlag{Name: "keys", Usage: "send a real key event per character instead of inserting the text"},
			&cli.BoolFlag{Name: "submit", Usage: "press Enter afterwards"},
			&cli.StringFlag{Name: "input-mode", Value: "cdp", Usage: "`MODE`: cdp (protocol input) or dom (synthetic DOM events)", EnvVars: []string{"DTB_INPUT_MODE"}},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			loc, text, err := optionalElementAnd(c, "TEXT (quote text with spaces)")
			if err != nil {
				return nil, err
			}
			mode, err := interact.ParseInputMode(c.String("input-mode"))
			if err != nil {
				return nil, err
			}
			o := interact.TypeOptions{Keys: c.Bool("keys"), Clear: c.Bool("clear"), Submit: c.Bool("submit"), Mode: mode, Settle: settleFrom(c)}
			return withInteract(c, inv, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
				return pg.Type(ctx, loc, text, o)
			})
		}),
	})
	register(&cli.Command{
		Name:     "press",
		Category: catBrowser,
		Usage:    "press a key or combination (Enter, Tab, Escape, ArrowDown, Control+a, Shift+Tab …)",
		UsageText: `dtb press [SELECTOR|@eN] KEY [locator flags]

Sends real key events (key, code, keyCode, modifiers, text for printable keys) to
the focused element, or to the located element after focusing it. Modifiers:
Control (Ctrl), Shift, Alt (Option), Meta (Cmd), joined with +. KeyboardEvent.code
names work too: KeyA, Digit3, Numpad0…Numpad9, NumpadEnter, NumpadAdd, ControlLeft,
ShiftRight, Minus …

Examples:
  dtb press Enter
  dtb press Control+a
  dtb press --label Search ArrowDown
  dtb press NumpadEnter
  dtb press ShiftRight+KeyA`,
		Flags: interactFlags(),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			loc, key, err := optionalElementAnd(c, "KEY")
			if err != nil {
				return nil, err
			}
			if _, err := interact.ParseKey(key); err != nil {
				return nil, err
			}
			return withInteract(c, inv, func(ctx context.Context, _ *session.Session, pg *interact.Page) (any, error) {
				return pg.Press(ctx, loc, key, settleFrom(c))
			})
		}),
	})
}

// optionalElementAnd parses "[ELEMENT] VALUE" positionals (type's text, press's
// key): the element, when given as a positional or by locator flags, is checked.
func optionalElementAnd(c *cli.Context, what string) (interact.Locator, string, error) {
	args := positionals(c)
	var target, value string
	switch len(args) {
	case 1:
		value = args[0]
	case 2:
		target, value = args[0], args[1]
	default:
		return interact.Locator{}, "", output.Usage("%s wants %s, or an element and %s, got %d arguments", c.Command.Name, what, what, len(args))
	}
	loc, err := elementFrom(c, target, false)
	return loc, value, err
}
