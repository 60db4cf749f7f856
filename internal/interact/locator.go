package interact

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dtb-cli/dtb/internal/output"
)

// Locator names the element an action acts on. Exactly one kind is set: CSS,
// Text, Role (with an optional Name), Label, Placeholder, Ref, or X/Y. Text,
// Name, Label, Placeholder and Within match a case-insensitive substring of
// the whitespace-normalised text unless Exact (then the whole text,
// case-sensitive). Nth (from 0; -1 for none) picks one of several matches.
type Locator struct {
	CSS         string   `json:"css,omitempty"`
	Text        string   `json:"text,omitempty"`
	Role        string   `json:"role,omitempty"`
	Name        string   `json:"name,omitempty"`
	Label       string   `json:"label,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Exact       bool     `json:"exact,omitempty"`
	Within      string   `json:"within,omitempty"`
	X           *float64 `json:"x,omitempty"`
	Y           *float64 `json:"y,omitempty"`
	Document    bool     `json:"document,omitempty"`
	Ref         string   `json:"-"`
	Frame       string   `json:"-"`
	Nth         int      `json:"-"`
}

// NoNth is Locator.Nth when no --nth was given.
const NoNth = -1

var refRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@?e[0-9]+$`) })

// IsRef reports whether s is a ref such as e3 or @e3.
func IsRef(s string) bool { return refRE().MatchString(s) }

// Positional turns a positional locator argument into a Locator field: "@e3"
// is a ref, anything else CSS.
func (l *Locator) Positional(arg string) error {
	if strings.HasPrefix(arg, "@") {
		if !IsRef(arg) {
			return output.Usage("%q is not a ref (refs look like @e3; inspect prints them)", arg)
		}
		l.Ref = strings.TrimPrefix(arg, "@")
		return nil
	}
	l.CSS = arg
	return nil
}

// Kinds lists the locator kinds set.
func (l Locator) Kinds() []string {
	var k []string
	if l.CSS != "" {
		k = append(k, "--css")
	}
	if l.Text != "" {
		k = append(k, "--text")
	}
	if l.Role != "" {
		k = append(k, "--role")
	}
	if l.Label != "" {
		k = append(k, "--label")
	}
	if l.Placeholder != "" {
		k = append(k, "--placeholder")
	}
	if l.Ref != "" {
		k = append(k, "--ref")
	}
	if l.X != nil || l.Y != nil {
		k = append(k, "--x/--y")
	}
	return k
}

// Empty reports whether no locator kind is set (Within, Frame and Nth alone do
// not name an element).
func (l Locator) Empty() bool { return len(l.Kinds()) == 0 }

// Validate checks that the locator names one element kind consistently.
func (l Locator) Validate() error {
	k := l.Kinds()
	switch {
	case len(k) == 0:
		return output.Usage("no locator: give a CSS selector, @ref, --css, --text, --role, --label, --placeholder, --ref or --x/--y")
	case len(k) > 1:
		return output.Usage("give one locator kind, not %s", strings.Join(k, " and "))
	}
	if l.Name != "" && l.Role == "" {
		return output.Usage("--name goes with --role")
	}
	if (l.X == nil) != (l.Y == nil) {
		return output.Usage("--x and --y go together")
	}
	if l.Document && l.X == nil {
		return output.Usage("--document goes with --x/--y")
	}
	if l.Ref != "" {
		if !IsRef(l.Ref) {
			return output.Usage("%q is not a ref (refs look like e3; inspect prints them)", l.Ref)
		}
		if l.Within != "" || l.Frame != "" || l.Nth != NoNth {
			return output.Usage("a ref names one element: --within, --frame and --nth do not apply")
		}
	}
	if l.X != nil && (l.Within != "" || l.Nth != NoNth) {
		return output.Usage("--x/--y name a point: --within and --nth do not apply")
	}
	if l.Nth < NoNth {
		return output.Usage("--nth counts from 0")
	}
	return nil
}

// String describes the locator as the flags that would give it.
func (l Locator) String() string {
	var parts []string
	q := strconv.Quote
	switch {
	case l.Ref != "":
		parts = append(parts, "@"+strings.TrimPrefix(l.Ref, "@"))
	case l.CSS != "":
		parts = append(parts, "--css "+q(l.CSS))
	case l.Text != "":
		parts = append(parts, "--text "+q(l.Text))
	case l.Role != "":
		parts = append(parts, "--role "+l.Role)
		if l.Name != "" {
			parts = append(parts, "--name "+q(l.Name))
		}
	case l.Label != "":
		parts = append(parts, "--label "+q(l.Label))
	case l.Placeholder != "":
		parts = append(parts, "--placeholder "+q(l.Placeholder))
	case l.X != nil && l.Y != nil:
		parts = append(parts, fmt.Sprintf("--x %g --y %g", *l.X, *l.Y))
		if l.Document {
			parts = append(parts, "--document")
		}
	}
	if l.Exact {
		parts = append(parts, "--exact")
	}
	if l.Within != "" {
		parts = append(parts, "--within "+q(l.Within))
	}
	if l.Frame != "" {
		parts = append(parts, "--frame "+q(l.Frame))
	}
	if l.Nth != NoNth {
		parts = append(parts, fmt.Sprintf("--nth %d", l.Nth))
	}
	return strings.Join(parts, " ")
}
