package interact

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"

	"github.com/dtb-cli/dtb/internal/output"
)

// Modifier bits of Input.dispatchKeyEvent / dispatchMouseEvent.
const (
	ModAlt   = 1
	ModCtrl  = 2
	ModMeta  = 4
	ModShift = 8
)

// keyDef is one key of a US keyboard: its DOM key and code, Windows virtual
// key code, the text it types (printable keys) and, for printable keys, the
// key and text with Shift.
type keyDef struct {
	key, code  string
	keyCode    int
	text       string
	shiftKey   string
	location   int
	isModifier int // the modifier bit the key holds
}

var keyDefs = map[string]keyDef{}

// keyAliases maps other spellings to DOM key names.
var keyAliases = map[string]string{
	"ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta", "super": "Meta", "win": "Meta",
	"option": "Alt", "alt": "Alt", "shift": "Shift", "esc": "Escape", "escape": "Escape", "return": "Enter", "enter": "Enter",
	"tab": "Tab", "space": " ", "spacebar": " ", "backspace": "Backspace", "delete": "Delete", "del": "Delete", "insert": "Insert", "ins": "Insert",
	"up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
	"arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
	"home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown", "pgup": "PageUp", "pgdn": "PageDown",
	"controlormeta": "Control", "capslock": "CapsLock", "contextmenu": "ContextMenu", "plus": "+",
}

func init() {
	add := func(d keyDef) { keyDefs[d.key] = d }
	add(keyDef{key: "Enter", code: "Enter", keyCode: 13, text: "\r"})
	add(keyDef{key: "Tab", code: "Tab", keyCode: 9})
	add(keyDef{key: "Escape", code: "Escape", keyCode: 27})
	add(keyDef{key: "Backspace", code: "Backspace", keyCode: 8})
	add(keyDef{key: "Delete", code: "Delete", keyCode: 46})
	add(keyDef{key: "Insert", code: "Insert", keyCode: 45})
	add(keyDef{key: " ", code: "Space", keyCode: 32, text: " ", shiftKey: " "})
	add(keyDef{key: "ArrowUp", code: "ArrowUp", keyCode: 38})
	add(keyDef{key: "ArrowDown", code: "ArrowDown", keyCode: 40})
	add(keyDef{key: "ArrowLeft", code: "ArrowLeft", keyCode: 37})
	add(keyDef{key: "ArrowRight", code: "ArrowRight", keyCode: 39})
	add(keyDef{key: "Home", code: "Home", keyCode: 36})
	add(keyDef{key: "End", code: "End", keyCode: 35})
	add(keyDef{key: "PageUp", code: "PageUp", keyCode: 33})
	add(keyDef{key: "PageDown", code: "PageDown", keyCode: 34})
	add(keyDef{key: "CapsLock", code: "CapsLock", keyCode: 20})
	add(keyDef{key: "ContextMenu", code: "ContextMenu", keyCode: 93})
	add(keyDef{key: "Control", code: "ControlLeft", keyCode: 17, location: 1, isModifier: ModCtrl})
	add(keyDef{key: "Shift", code: "ShiftLeft", keyCode: 16, location: 1, isModifier: ModShift})
	add(keyDef{key: "Alt", code: "AltLeft", keyCode: 18, location: 1, isModifier: ModAlt})
	add(keyDef{key: "Meta", code: "MetaLeft", keyCode: 91, location: 1, isModifier: ModMeta})
	for i := 1; i <= 12; i++ {
		k := "F" + itoa(i)
		add(keyDef{key: k, code: k, keyCode: 111 + i})
	}
	for c := 'a'; c <= 'z'; c++ {
		up := string(c - 32)
		add(keyDef{key: string(c), code: "Key" + up, keyCode: int(c - 32), text: string(c), shiftKey: up})
	}
	digits := ")!@#$%^&*("
	for i := 0; i <= 9; i++ {
		d := string(rune('0' + i))
		add(keyDef{key: d, code: "Digit" + d, keyCode: 48 + i, text: d, shiftKey: string(digits[i])})
	}
	punct := []struct {
		key, shift, code string
		kc               int
	}{
		{"-", "_", "Minus", 189}, {"=", "+", "Equal", 187}, {"[", "{", "BracketLeft", 219}, {"]", "}", "BracketRight", 221},
		{"\\", "|", "Backslash", 220}, {";", ":", "Semicolon", 186}, {"'", "\"", "Quote", 222}, {",", "<", "Comma", 188},
		{".", ">", "Period", 190}, {"/", "?", "Slash", 191}, {"`", "~", "Backquote", 192},
	}
	for _, p := range punct {
		add(keyDef{key: p.key, code: p.code, keyCode: p.kc, text: p.key, shiftKey: p.shift})
	}
	for k, d := range keyDefs {
		if d.shiftKey != "" && d.shiftKey != k {
			shifted[d.shiftKey] = k
		}
	}
	// KeyboardEvent.code names: every key above by its code (KeyA, Digit3,
	// Minus, ControlLeft …), plus the right-hand modifiers and the numpad.
	for _, d := range keyDefs {
		codeDefs[strings.ToLower(d.code)] = d
	}
	for _, m := range []string{"Control", "Shift", "Alt", "Meta"} {
		d := keyDefs[m]
		d.code, d.location = m+"Right", 2
		codeDefs[strings.ToLower(d.code)] = d
	}
	for i := 0; i <= 9; i++ {
		d := string(rune('0' + i))
		codeDefs["numpad"+d] = keyDef{key: d, code: "Numpad" + d, keyCode: 96 + i, text: d, location: 3}
	}
	for _, n := range []struct {
		code, key string
		kc        int
	}{{"NumpadAdd", "+", 107}, {"NumpadSubtract", "-", 109}, {"NumpadMultiply", "*", 106}, {"NumpadDivide", "/", 111}, {"NumpadDecimal", ".", 110}, {"NumpadEqual", "=", 187}, {"NumpadComma", ",", 188}} {
		codeDefs[strings.ToLower(n.code)] = keyDef{key: n.key, code: n.code, keyCode: n.kc, text: n.key, location: 3}
	}
	codeDefs["numpadenter"] = keyDef{key: "Enter", code: "NumpadEnter", keyCode: 13, text: "\r", location: 3}
}

// codeDefs are the keys by lower-cased KeyboardEvent.code (filled by init).
var codeDefs = map[string]keyDef{}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return "1" + string(rune('0'+i-10))
}

// shifted maps a character typed with Shift to its unshifted key (filled by
// init, after keyDefs).
var shifted = map[string]string{}

// KeyEvent is one resolved key of a combination.
type KeyEvent struct {
	Key, Code string
	KeyCode   int
	Text      string
	Location  int
	Modifier  int
}

// Chord is a parsed key combination such as Control+Shift+a: modifiers held
// down, then the key pressed.
type Chord struct {
	Mods []KeyEvent
	Key  KeyEvent
}

// ParseKey parses a key or a combination: "Enter", "Tab", "Control+a",
// "Shift+Tab", "Alt+ArrowDown", "a", "A" (Shift+a), "F5", or KeyboardEvent.code
// names ("KeyA", "Digit3", "Numpad0", "NumpadEnter", "ShiftRight"). Modifiers are
// Control (Ctrl), Shift, Alt (Option) and Meta (Cmd); "+" alone or at the end
// is the plus key.
func ParseKey(s string) (Chord, error) {
	if s == "" {
		return Chord{}, output.Usage("press wants a key such as Enter, Tab, Escape, ArrowDown or Control+a")
	}
	var parts []string
	if s == "+" {
		parts = []string{"+"}
	} else {
		parts = strings.Split(s, "+")
		if strings.HasSuffix(s, "++") {
			parts = append(parts[:len(parts)-2], "+")
		}
	}
	var ch Chord
	mods := 0
	for i, p := range parts {
		if p == "" {
			return Chord{}, output.Usage("bad key combination %q", s)
		}
		name := p
		if a, ok := keyAliases[strings.ToLower(p)]; ok {
			name = a
		}
		var d keyDef
		var ok bool
		shift := false
		if d, ok = keyDefs[name]; !ok {
			if cd, isCode := codeDefs[strings.ToLower(p)]; isCode && utf8.RuneCountInString(p) > 1 {
				d, ok = cd, true
			} else if base, isShifted := shifted[name]; isShifted {
				d, ok, shift = keyDefs[base], true, true
			} else if utf8.RuneCountInString(name) == 1 {
				// Any other single character: typed as text.
				d, ok = keyDef{key: name, text: name}, true
			}
		}
		if !ok {
			return Chord{}, output.Usage("unknown key %q in %q (keys: Enter, Tab, Escape, Backspace, Delete, ArrowUp…, Home, End, PageUp, PageDown, F1…F12, letters, digits, Control, Shift, Alt, Meta, or a KeyboardEvent.code such as KeyA, Digit3, Numpad0, NumpadEnter, ShiftRight)", p, s)
		}
		ev := KeyEvent{Key: d.key, Code: d.code, KeyCode: d.keyCode, Text: d.text, Location: d.location, Modifier: d.isModifier}
		if i < len(parts)-1 {
			if d.isModifier == 0 {
				return Chord{}, output.Usage("%q in %q is not a modifier (Control, Shift, Alt, Meta)", p, s)
			}
			ch.Mods = append(ch.Mods, ev)
			mods |= d.isModifier
			continue
		}
		if shift && mods&ModShift == 0 {
			sd := keyDefs["Shift"]
			ch.Mods = append(ch.Mods, KeyEvent{Key: sd.key, Code: sd.code, KeyCode: sd.keyCode, Location: sd.location, Modifier: ModShift})
			mods |= ModShift
		}
		if mods&ModShift != 0 && d.shiftKey != "" {
			ev.Key = d.shiftKey
			ev.Text = d.shiftKey
		}
		ch.Key = ev
	}
	return ch, nil
}

// Modifiers is the bitmask of the chord's modifiers.
func (c Chord) Modifiers() int {
	m := 0
	for _, k := range c.Mods {
		m |= k.Modifier
	}
	return m
}

// String is the chord as the user would write it, normalised.
func (c Chord) String() string {
	var parts []string
	for _, m := range c.Mods {
		parts = append(parts, m.Key)
	}
	k := c.Key.Key
	if k == " " {
		k = "Space"
	}
	return strings.Join(append(parts, k), "+")
}

// ParseModifiers parses --modifiers: a comma- or plus-separated list.
func ParseModifiers(s string) (int, error) {
	m := 0
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' || r == ' ' }) {
		name := keyAliases[strings.ToLower(p)]
		d, ok := keyDefs[name]
		if !ok || d.isModifier == 0 {
			return 0, output.Usage("unknown modifier %q (Control, Shift, Alt, Meta)", p)
		}
		m |= d.isModifier
	}
	return m, nil
}

// keyParams are the Input.dispatchKeyEvent parameters of one key event.
// (Zero fields are left out: each is the protocol's default.)
func keyParams(typ input.DispatchKeyEventType, k KeyEvent, mods int) input.DispatchKeyEventParams {
	p := input.DispatchKeyEventParams{
		Type:                  typ,
		Modifiers:             int64(mods),
		Key:                   k.Key,
		Code:                  k.Code,
		WindowsVirtualKeyCode: int64(k.KeyCode),
		NativeVirtualKeyCode:  int64(k.KeyCode),
		Location:              int64(k.Location),
	}
	if typ == input.DispatchKeyEventTypeKeyDown && k.Text != "" {
		p.Text = k.Text
		p.UnmodifiedText = k.Text
	}
	return p
}

// Press sends a chord as real key events: each modifier down, the key down
// and up, the modifiers up in reverse. As in a real keyboard, the key types
// its text only without Control, Alt or Meta held.
//
// With a guard g, the chord starts only after g's check and each later event
// only while g holds: a chord cut short by a navigation sends nothing more.
func (p *Page) press(ctx context.Context, c Chord, g *keyGuard) error {
	if err := g.check(ctx); err != nil {
		return err
	}
	if err := p.sendChord(ctx, c, g); err != errChordDone {
		return err
	}
	return nil
}

// errChordDone ends a chord whose key went down before its document went.
var errChordDone = errors.New("chord done")

func (p *Page) sendChord(ctx context.Context, c Chord, g *keyGuard) error {
	mods := 0
	call := func(params input.DispatchKeyEventParams) error {
		if err := g.held(); err != nil {
			if params.Type == input.DispatchKeyEventTypeKeyUp {
				// The chord did its work (Enter that submits a form):
				// the releases are not sent into the next document.
				return errChordDone
			}
			return err
		}
		_, err := proto.Call(ctx, p.tab, input.DispatchKeyEvent, params)
		return wrapCDP(ctx, err)
	}
	for _, m := range c.Mods {
		mods |= m.Modifier
		if err := call(keyParams(input.DispatchKeyEventTypeRawKeyDown, m, mods)); err != nil {
			return err
		}
	}
	k := c.Key
	typ := input.DispatchKeyEventTypeKeyDown
	if k.Text == "" || mods&^ModShift != 0 {
		k.Text = ""
		typ = input.DispatchKeyEventTypeRawKeyDown
	}
	// A modifier pressed alone holds its own flag while down, as on a keyboard.
	down := keyParams(typ, k, mods|k.Modifier)
	if cmd := editCommand(c); cmd != "" {
		down.Commands = []string{cmd}
	}
	if err := call(down); err != nil {
		return err
	}
	if err := call(keyParams(input.DispatchKeyEventTypeKeyUp, k, mods)); err != nil {
		return err
	}
	for i := len(c.Mods) - 1; i >= 0; i-- {
		m := c.Mods[i]
		mods &^= m.Modifier
		if err := call(keyParams(input.DispatchKeyEventTypeKeyUp, m, mods)); err != nil {
			return err
		}
	}
	return nil
}

// editCommand is the editing command a platform shortcut runs, which headless
// Chrome only performs when the key event names it.
func editCommand(c Chord) string {
	mods := c.Modifiers()
	if mods != ModCtrl && mods != ModMeta {
		return ""
	}
	switch strings.ToLower(c.Key.Key) {
	case "a":
		return "selectAll"
	case "c":
		return "copy"
	case "x":
		return "cut"
	case "v":
		return "paste"
	case "z":
		return "undo"
	case "y":
		return "redo"
	}
	return ""
}

// typeKeys types text as real key events, one character at a time; a
// character without a key of its own is inserted as text.
//
// Each character goes only after guard g's check: the text stops where the
// document or the focus changed (g.typed counts what went).
func (p *Page) typeKeys(ctx context.Context, text string, g *keyGuard) error {
	for _, r := range text {
		s := string(r)
		if s == "\n" {
			s = "Enter"
		}
		var c Chord
		var err error
		if _, known := keyDefs[s]; known || shifted[s] != "" || s == "Enter" {
			c, err = ParseKey(s)
		} else if s == "\t" {
			c, err = ParseKey("Tab")
		} else {
			if err := g.check(ctx); err != nil {
				return err
			}
			if _, err := proto.Call(ctx, p.tab, input.InsertText, input.InsertTextParams{Text: s}); err != nil {
				return wrapCDP(ctx, err)
			}
			g.count()
			continue
		}
		if err != nil {
			return err
		}
		if err := p.press(ctx, c, g); err != nil {
			return err
		}
		g.count()
	}
	return nil
}
