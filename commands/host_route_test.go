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
