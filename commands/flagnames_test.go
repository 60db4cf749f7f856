package commands

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// withNamesOnce answers Names() from a flag's name and aliases, where urfave
// strips whatever follows a comma or a space: the same list only while no
// dtb flag name holds one.
func TestFlagNamesAreNameAndAliases(t *testing.T) {
	var walk func(path string, c *cli.Command)
	walk = func(path string, c *cli.Command) {
		for _, f := range append(append([]cli.Flag(nil), c.Flags...), outputFlags()...) {
			cp := cloneCommand(&cli.Command{Name: "x", Flags: []cli.Flag{f}})
			withNamesOnce(cp)
			if _, wrapped := cp.Flags[0].(interface{ unwrapFlag() cli.Flag }); !wrapped {
				t.Errorf("%s: flag %q of type %T is not wrapped: add its type to withNamesOnce", path, f.Names()[0], f)
				continue
			}
			if got, want := cp.Flags[0].Names(), f.Names(); !slices.Equal(got, want) {
				t.Errorf("%s: wrapped names %q, urfave's %q", path, got, want)
			}
		}
		for _, sub := range c.Subcommands {
			walk(path+" "+sub.Name, sub)
		}
	}
	for _, c := range registered {
		walk(c.Name, c)
	}
}

// The host runs command lines side by side on the shared registered
// commands: a run wraps only its own copy.
func TestNewAppLeavesRegisteredFlagsAlone(t *testing.T) {
	app := newApp("click", true)
	var ran *cli.Command
	for _, c := range app.Commands {
		if c.Name == "click" {
			ran = c
		}
	}
	if ran == nil || len(ran.Flags) == 0 {
		t.Fatal("newApp has no click with flags")
	}
	if _, wrapped := ran.Flags[0].(interface{ unwrapFlag() cli.Flag }); !wrapped {
		t.Errorf("newApp's click flag %T is not wrapped", ran.Flags[0])
	}
	for _, f := range findCommand(registered, "click").Flags {
		if _, wrapped := f.(interface{ unwrapFlag() cli.Flag }); wrapped {
			t.Fatalf("the registered click's flag %q was wrapped", f.Names()[0])
		}
	}
}

// A bool flag read as jq's -r keeps its hint through the wrapper.
func TestJQFlagHintSeesWrappedBoolFlags(t *testing.T) {
	var stderr strings.Builder
	getenv := func(k string) string {
		return map[string]string{"DTB_SESSION": "flagnames-test", "DTB_STATE_DIR": t.TempDir()}[k]
	}
	code := run(context.Background(), []string{"dtb", "eval", "1", "--jq", "--raw"}, IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr}, getenv)
	if code != 2 || !strings.Contains(stderr.String(), "is a flag: put it before --jq") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
}

// BenchmarkParseClick is urfave's share of a hosted click: the command line
// is parsed and the run stops at its bad jq program, before any work.
func BenchmarkParseClick(b *testing.B) {
	getenv := func(k string) string {
		return map[string]string{"DTB_SESSION": "flagnames-bench", "DTB_STATE_DIR": b.TempDir()}[k]
	}
	for b.Loop() {
		run(context.Background(), []string{"dtb", "click", "#save", "--jq", "("}, IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}, getenv)
	}
}

// A command tree the host prepared serves one run: the next run of that
// command builds its own (urfave marks a tree's flags as it parses them).
func TestPreparedAppServesOneRun(t *testing.T) {
	prepareApp("eval")
	first := appFor("eval", true)
	if first == nil || !prepareTaken(first) {
		t.Fatal("appFor did not hand out the prepared tree")
	}
	if second := appFor("eval", true); second == first || prepareTaken(second) {
		t.Fatal("a prepared tree was handed out twice")
	}
	prepareApp("eval")
	if help := appFor("eval", false); prepareTaken(help) {
		t.Fatal("a run that shows help got the prepared (plain) tree")
	}
	appFor("eval", true) // take it back out
	prepareApp("no-such-command")
	prepared.Lock()
	_, kept := prepared.apps["no-such-command"]
	prepared.Unlock()
	if kept {
		t.Fatal("a tree was kept for a name that is no command")
	}
}

// prepareTaken: app was set up before the run (prepared trees are).
func prepareTaken(app *cli.App) bool { return app.HelpName != "" }
