package commands

import (
	"slices"
	"testing"

	"github.com/dtb-cli/dtb/internal/hostwire"
)

// The front routes by hostwire.Commands without linking the commands: the
// list must be exactly the browser commands minus those that attach directly.
func TestHostCommandsAreTheBrowserCommands(t *testing.T) {
	direct := map[string]bool{"browser": true, "status": true, "upload": true}
	var want []string
	for _, c := range registered {
		if c.Category == catBrowser && !direct[c.Name] {
			want = append(want, c.Name)
			if len(c.Aliases) > 0 {
				t.Errorf("%s has aliases %v: hostwire.Route does not know them", c.Name, c.Aliases)
			}
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(hostwire.Commands))
	if !slices.Equal(got, want) {
		t.Fatalf("hostwire.Commands = %v\nbrowser commands through the host = %v", got, want)
	}
}

func TestHostRoute(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		args    []string
		env     func(string) string
		session string
		ok      bool
	}{
		{[]string{"dtb", "eval", "1+1"}, env(), "default", true},
		{[]string{"dtb", "eval", "1+1", "--session", "w"}, env(), "w", true},
		{[]string{"dtb", "eval", "1+1", "--session=w"}, env("DTB_SESSION", "x"), "w", true},
		{[]string{"dtb", "click", "#a"}, env("DTB_SESSION", "x"), "x", true},
		{[]string{"dtb", "eval"}, env(), "", false},      // the expression from stdin
		{[]string{"dtb", "eval", "-"}, env(), "", false}, // stdin
		{[]string{"dtb", "eval", "1", "--help"}, env(), "", false},
		{[]string{"dtb", "eval", "1"}, env("DTB_HOST", "off"), "", false},
		{[]string{"dtb", "eval", "1", "--cdp", "http://h:1"}, env(), "", false},
		{[]string{"dtb", "eval", "1", "--cdp", "http://h:1"}, env("DTB_HOST", "always"), "default", true},
		{[]string{"dtb", "eval", "1"}, env("DTB_CDP", "http://h:1"), "", false},
		{[]string{"dtb", "screenshot", "--out", "a.png"}, env(), "", false}, // relative to the CLI
		{[]string{"dtb", "screenshot", "--out", "/tmp/a.png"}, env(), "default", true},
		{[]string{"dtb", "status"}, env(), "", false},
		{[]string{"dtb", "upload", "#f", "/tmp/x"}, env(), "", false},
		{[]string{"dtb", "state"}, env(), "", false},
		{[]string{"dtb", "eval", "1", "--session", "../x"}, env(), "", false},
		{[]string{"dtb", "--version"}, env(), "", false},
	}
	for _, c := range cases {
		session, ok := hostwire.Route(c.args, c.env)
		if session != c.session || ok != c.ok {
			t.Errorf("Route(%q) = %q, %v; want %q, %v", c.args, session, ok, c.session, c.ok)
		}
	}
}
