package interact

import (
	"strings"
	"testing"
)


func TestCodeNamedKeys(t *testing.T) {
	p, tab, ctx := open(t, "app.html")
	kr := Locator{Label: "Key recorder", Nth: NoNth}
	for _, c := range []struct{ key, want string }{
		{"KeyA", "keydown:a:KeyA:65:"},
		{"Digit3", "keydown:3:Digit3:51:"},
		{"Numpad0", "keydown:0:Numpad0:96:"},
		{"Numpad9", "keydown:9:Numpad9:105:"},
		{"NumpadEnter", "keydown:Enter:NumpadEnter:13:"},
		{"NumpadAdd", "keydown:+:NumpadAdd:107:"},
		{"ControlLeft+KeyA", "keydown:a:KeyA:65:C"},
		{"ShiftRight+KeyB", "keydown:B:KeyB:66:S"},
		{"ShiftRight", "keydown:Shift:ShiftRight:16:S"},
		{"ControlRight", "keydown:Control:ControlRight:17:C"},
		{"AltLeft+Minus", "keydown:-:Minus:189:A"},
	} {
		eval(t, tab, "window.events = [], 1")
		if _, err := p.Press(ctx, kr, c.key, quick); err != nil {
			t.Fatalf("press %s: %v", c.key, err)
		}
		got := events(t, tab)
		if !contains(got, c.want) {
			t.Fatalf("press %s: page recorded %v, want %s", c.key, got, c.want)
		}
	}
	// Digits typed through their codes land in the field.
	eval(t, tab, "document.getElementById('keys').value = '', 1")
	for _, k := range []string{"Numpad4", "Digit2", "KeyX"} {
		if _, err := p.Press(ctx, kr, k, quick); err != nil {
			t.Fatal(err)
		}
	}
	if v := eval(t, tab, "document.getElementById('keys').value"); v != "42x" {
		t.Fatalf("typed by code: %q", v)
	}
	if _, err := ParseKey("KeyBogus"); reason(err) != "usage" || !strings.Contains(err.Error(), "KeyboardEvent.code") {
		t.Fatalf("bad code: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
