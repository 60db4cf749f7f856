package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// Build builds dtb (the front, cmd/dtb, and the engine beside it,
// cmd/dtb-engine) once per test binary, into a temporary directory that
// Release removes, and returns the front's path. It builds as the README
// says, with the urfave_cli_no_docs tag, so the tests run what users run.
func Build() (string, error) {
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "dtb-testbin-")
		if err != nil {
			built.err = err
			return
		}
		bin := filepath.Join(dir, "dtb")
		if out, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", dir+string(filepath.Separator), "github.com/dtb-cli/dtb/cmd/dtb", "github.com/dtb-cli/dtb/cmd/dtb-engine").CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.dir, built.bin = dir, bin
	})
	return built.bin, built.err
}

// MustBuild is Build in a test, which fails when the build does.
func MustBuild(t testing.TB) string {
	t.Helper()
	bin, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func removeBuild() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// RunTimeout bounds every run of dtb through Run and RunWith.
const RunTimeout = 60 * time.Second

// CLI runs a dtb binary as a user would, with its own state and cache.
type CLI struct {
	Bin          string
	Dir          string   // working directory of the runs; "" for the test's
	State, Cache string   // DTB_STATE_DIR and DTB_CACHE_DIR of every run
	Env          []string // more variables for every run
	Trace        bool     // log every run of Run and RunWith with its time and exit code
}

// NewCLI runs bin with DTB_STATE_DIR dir/state, DTB_CACHE_DIR dir/cache and
// env added to the environment.
func NewCLI(bin, dir string, env ...string) *CLI {
	return &CLI{Bin: bin, State: filepath.Join(dir, "state"), Cache: filepath.Join(dir, "cache"), Env: env}
}

// CleanEnv is this process's environment without the DTB_* settings and
// NO_COLOR of the developer's shell.
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DTB_") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return env
}

// Environ is the environment of every run: CleanEnv, then DTB_STATE_DIR,
// DTB_CACHE_DIR and Env.
func (c *CLI) Environ() []string {
	env := append(CleanEnv(), "DTB_STATE_DIR="+c.State, "DTB_CACHE_DIR="+c.Cache)
	return append(env, c.Env...)
}

// Exec runs dtb with args until it exits or ctx ends; env is added to Environ,
// stdin is its input. A dtb that cannot run has Code -1, the reason in Stderr.
func (c *CLI) Exec(ctx context.Context, env []string, stdin string, args ...string) Result {
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Env = append(c.Environ(), env...)
	cmd.Dir = c.Dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Result{Args: args, Stdout: out.String(), Stderr: errb.String(), Elapsed: time.Since(start)}
	if cmd.ProcessState != nil {
		r.MaxRSS = maxRSS(cmd.ProcessState)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		r.Code = -1
		r.Stderr += "\n(testbrowser: " + err.Error() + ")"
	}
	return r
}

// Run runs dtb with args, RunTimeout at most.
func (c *CLI) Run(t testing.TB, args ...string) Result {
	t.Helper()
	return c.RunWith(t, nil, "", args...)
}

// RunWith is Run with env added to Environ and stdin as input.
func (c *CLI) RunWith(t testing.TB, env []string, stdin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r := c.Exec(ctx, env, stdin, args...)
	if c.Trace {
		t.Logf("%6dms exit %d: dtb %s", r.Elapsed.Milliseconds(), r.Code, strings.Join(args, " "))
	}
	return r
}

// Result is what a run of dtb did.
type Result struct {
	Args           []string
	Code           int // exit code; -1 when dtb could not run
	Stdout, Stderr string
	Elapsed        time.Duration
	MaxRSS         int64 // peak resident memory of the process, bytes (0: unknown)
}

func (r Result) String() string {
	return fmt.Sprintf("dtb %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.Args, " "), r.Code, r.Stdout, r.Stderr)
}

// Exit requires the exit code.
func (r Result) Exit(t testing.TB, code int) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("want exit %d\n%s", code, r)
	}
}

// OK requires exit 0 and returns stdout decoded as a JSON object (nil when
// stdout is empty or something else, a --jq scalar: use Stdout).
func (r Result) OK(t testing.TB) map[string]any {
	t.Helper()
	r.Exit(t, 0)
	var doc map[string]any
	if json.Unmarshal([]byte(r.Stdout), &doc) != nil {
		return nil
	}
	return doc
}

// Decode requires stdout to be JSON and decodes it into v.
func (r Result) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r)
	}
}

// Fails requires the exit code, nothing on stdout and, as the last line of
// stderr, an error document ("ok": false) with the reason; it returns that
// document.
func (r Result) Fails(t testing.TB, code int, reason string) map[string]any {
	t.Helper()
	if r.Code != code {
		t.Fatalf("want exit %d reason %s\n%s", code, reason, r)
	}
	if r.Stdout != "" {
		t.Fatalf("stdout on failure\n%s", r)
	}
	doc := r.ErrorDoc()
	if doc == nil || doc["reason"] != reason || doc["ok"] != false {
		t.Fatalf("want reason %s in the stderr error document\n%s", reason, r)
	}
	return doc
}

// ErrorDoc is the error document on the last line of stderr (warnings come
// before it); nil when that line is not JSON with a reason.
func (r Result) ErrorDoc() map[string]any {
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	var doc map[string]any
	if json.Unmarshal([]byte(lines[len(lines)-1]), &doc) != nil || doc["reason"] == nil {
		return nil
	}
	return doc
}

// Warnings are the reasons of the warning documents on stderr.
func (r Result) Warnings() []string {
	var out []string
	for _, line := range strings.Split(r.Stderr, "\n") {
		var doc map[string]any
		if json.Unmarshal([]byte(line), &doc) == nil {
			if w, ok := doc["warning"].(string); ok {
				out = append(out, w)
			}
		}
	}
	return out
}

// CommandWarnings are the warnings without "host-unavailable": that one says
// how the command reached the browser (the session host was too slow to take
// it, as on a loaded machine, and dtb ran it itself), not what it found.
func (r Result) CommandWarnings() []string {
	var out []string
	for _, w := range r.Warnings() {
		if w != "host-unavailable" {
			out = append(out, w)
		}
	}
	return out
}
