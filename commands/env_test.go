package commands

import (
	"sort"
	"testing"

	"github.com/urfave/cli/v2"
)

// argumentFlags name what one invocation acts on or asks for (an element, a jq
// program, a wait condition, an input file …). They have no DTB_* variable on
// purpose: a value left in the environment would silently change what a later
// command clicks, reads or prints. Every other flag is a setting and has one.
var argumentFlags = map[string]bool{
	// output: the program and its variables
	"jq": true, "arg": true,
	// locators and what they pick
	"css": true, "text": true, "role": true, "name": true, "label": true, "placeholder": true,
	"exact": true, "ref": true, "frame": true, "x": true, "y": true, "document": true,
	"nth": true, "within": true, "element": true, "in": true, "padding": true,
	// what an action does
	"button": true, "count": true, "modifiers": true, "force": true, "clear": true, "keys": true,
	"submit": true, "by-label": true, "dx": true, "dy": true, "to": true, "current": true,
	"incognito": true, "clip": true, "full": true, "annotate": true, "out": true, "boxes": true, "file": true,
	"no-await": true, "input-file": true,
	// conditions to wait for
	"until": true, "load": true, "gone": true, "url": true, "js": true, "quiet": true,
	"wait-css": true, "wait-text": true, "wait-url": true,
	// what to read or change of the page, and how to print it
	"level": true, "since": true, "watch": true, "failed": true, "filter": true, "fail-on-failed": true,
	"reload": true, "hard": true, "body": true, "domain": true, "path": true, "expires": true, "http-only": true,
	"secure": true, "same-site": true, "stdin": true, "steps": true, "landscape": true,
	"background": true, "scale": true, "margin": true, "pages": true, "css-page-size": true,
	// what a route answers
	"status": true, "header": true, "delay": true, "abort": true, "list": true, "har": true,
}

// drag's drop target: the locator flags again, with a to- prefix.
func init() {
	for _, f := range prefixedLocatorFlags("to-", "", "") {
		argumentFlags[f.Names()[0]] = true
	}
}

func TestEverySettingHasAnEnvironmentVariable(t *testing.T) {
	var missing []string
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				name := f.Names()[0]
				ev, ok := f.(interface{ GetEnvVars() []string })
				if !ok || len(ev.GetEnvVars()) > 0 || argumentFlags[name] {
					continue
				}
				missing = append(missing, prefix+c.Name+" --"+name)
			}
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("", NewApp().Commands)
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("flags with neither a DTB_* variable nor a place in argumentFlags: %v", missing)
	}
}
