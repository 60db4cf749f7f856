package front

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildFront builds the front alone into a fresh folder.
func buildFront(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "dtb")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dtb-cli/dtb/cmd/dtb").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir, bin
}

func run(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if xe, ok := err.(*exec.ExitError); ok {
		code = xe.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// Without dtb-engine beside it, the front says so in an error document.
func TestFrontWithoutEngine(t *testing.T) {
	_, bin := buildFront(t)
	_, stderr, code := run(t, bin, nil, "--version")
	var doc struct {
		OK            *bool
		Reason, Error string
	}
	if err := json.Unmarshal([]byte(stderr), &doc); err != nil || code != 1 || doc.Reason != "engine-missing" || doc.OK == nil || *doc.OK {
		t.Fatalf("exit %d, stderr %q: want exit 1 and reason engine-missing", code, stderr)
	}
}

// What the host does not take goes to the engine with the same argv, and
// the engine learns why the host could not take a browser command.
func TestFrontHandsOverToEngine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in engine is a shell script")
	}
	dir, bin := buildFront(t)
	// A stand-in engine (the real one is tested through every CLI test):
	// it prints what it was given.
	script := "#!/bin/sh\nprintf '%s|' \"$@\"\nprintf '%s' \"$" + "DTB_FRONT_HOST_UNAVAILABLE\"\nexit 7\n"
	if err := os.WriteFile(filepath.Join(dir, EngineName), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	// Not a browser command: straight to the engine, nothing added.
	out, _, code := run(t, bin, []string{"DTB_STATE_DIR=" + state}, "state", "--jq", ".a b")
	if out != "state|--jq|.a b|" || code != 7 {
		t.Fatalf("not handed over as given: %q, exit %d", out, code)
	}
	// Through a symlink elsewhere (an install into a PATH folder): the
	// engine beside the front's real file.
	link := filepath.Join(t.TempDir(), "dtb")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	if out, _, code := run(t, link, []string{"DTB_STATE_DIR=" + state}, "version"); out != "version|" || code != 7 {
		t.Fatalf("through a symlink: %q, exit %d", out, code)
	}
	// The engine itself a symlink (a package manager's layout): followed.
	real := filepath.Join(t.TempDir(), "engine-real")
	if err := os.Rename(filepath.Join(dir, EngineName), real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, EngineName)); err != nil {
		t.Fatal(err)
	}
	if out, _, code := run(t, bin, []string{"DTB_STATE_DIR=" + state}, "version"); out != "version|" || code != 7 {
		t.Fatalf("through an engine symlink: %q, exit %d", out, code)
	}
	// One that is not executable is missing.
	if err := os.Chmod(real, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, bin, []string{"DTB_STATE_DIR=" + state}, "version"); code != 1 || !strings.Contains(stderr, "engine-missing") {
		t.Fatalf("a non-executable engine: %q, exit %d", stderr, code)
	}
	if err := os.Chmod(real, 0o755); err != nil {
		t.Fatal(err)
	}
	// A browser command whose host cannot be reached (the socket path is
	// over the unix limit): the engine runs it, told why.
	long := filepath.Join(state, strings.Repeat("d", 120))
	out, _, code = run(t, bin, []string{"DTB_STATE_DIR=" + long}, "eval", "1+1")
	if !strings.HasPrefix(out, "eval|1+1|") || !strings.Contains(out, "too long") || code != 7 {
		t.Fatalf("host unavailable: engine got %q, exit %d", out, code)
	}
}

// The front is fast only while it links nothing heavy: every package it
// links runs its init on every command.
func TestFrontLinksOnlyTheWire(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/dtb-cli/dtb/cmd/dtb").Output()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/dtb-cli/dtb/cmd/dtb": true, "github.com/dtb-cli/dtb/internal/front": true,
		"github.com/dtb-cli/dtb/internal/hostwire": true, "github.com/dtb-cli/dtb/internal/proc": true,
		"github.com/dtb-cli/dtb/internal/userdirs": true, "github.com/dtb-cli/dtb/internal/rawfile": true,
		"github.com/mattn/go-isatty": true,
		"golang.org/x/sys/unix":      true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net" || pkg == "os/user" || pkg == "runtime/cgo" {
			// They link the C library: a dynamically linked front starts
			// about 1.5 ms slower.
			t.Errorf("the front links %s", pkg)
		}
		first, _, _ := strings.Cut(pkg, "/")
		if !strings.Contains(first, ".") || allowed[pkg] {
			continue // the standard library
		}
		t.Errorf("the front links %s", pkg)
	}
}
