package output

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// ansi matches the SGR escapes fatih/color writes.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// render runs Prepare then Result on buffers, the way commands.action does.
func render(t *testing.T, opts Options, v any) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	p := New(opts, &out, &errb)
	if err := p.Prepare(); err != nil {
		return out.String(), errb.String(), err
	}
	err = p.Result(context.Background(), v)
	return out.String(), errb.String(), err
}

func TestResult(t *testing.T) {
	t.Setenv("NO_COLOR", "") // an empty NO_COLOR does not disable colour (no-color.org)
	doc := map[string]any{"b": 1, "a": []any{1, "x"}, "html": "<a&b>"}
	ordered := json.RawMessage(`{"z": 1, "a": {"y": true, "b": null}, "m": [3, 2]}`)
	tests := []struct {
		name string
		opts Options
		in   any
		want string
	}{
		{"compact is the default off a terminal", Options{}, doc,
			`{"a":[1,"x"],"b":1,"html":"<a&b>"}` + "\n"},
		{"--compact", Options{Compact: true}, doc,
			`{"a":[1,"x"],"b":1,"html":"<a&b>"}` + "\n"},
		{"--pretty", Options{Pretty: true}, map[string]any{"b": 1, "a": []any{1}},
			"{\n  \"a\": [\n    1\n  ],\n  \"b\": 1\n}\n"},
		{"string result is JSON-quoted without --raw", Options{}, "he said \"hi\"",
			`"he said \"hi\""` + "\n"},
		{"--raw prints a string bare", Options{Raw: true}, "he said \"hi\"\tok",
			"he said \"hi\"\tok\n"},
		{"--raw leaves non-strings as JSON", Options{Raw: true}, map[string]any{"s": "x"},
			`{"s":"x"}` + "\n"},
		{"--raw on a number", Options{Raw: true}, 9, "9\n"},
		{"--raw on a JSON document that is a string (an eval result)", Options{Raw: true}, json.RawMessage(`"a\u00e9\nb"`), "a\u00e9\nb\n"},
		{"--raw leaves a JSON document that is an object as JSON", Options{Raw: true}, json.RawMessage(`{"s":"x"}`), `{"s":"x"}` + "\n"},
		{"--jq with several outputs, one per line", Options{JQ: ".a[], .b"}, doc,
			"1\n\"x\"\n1\n"},
		{"--jq with several outputs and --raw", Options{JQ: ".a[]", Raw: true}, doc,
			"1\nx\n"},
		{"--jq pretty prints each output", Options{JQ: ".a, .b", Pretty: true}, doc,
			"[\n  1,\n  \"x\"\n]\n1\n"},
		{"--jq with no output prints nothing", Options{JQ: "empty"}, doc, ""},
		{"--jq halt ends the output", Options{JQ: "1, halt, 2"}, doc, "1\n"},
		{"--arg binds $name as a string", Options{JQ: `{who: $who, n: $n}`, Args: map[string]string{"who": "me", "n": "9"}}, nil,
			`{"n":"9","who":"me"}` + "\n"},
		{"--arg with --raw", Options{JQ: `"hello " + $who`, Raw: true, Args: map[string]string{"who": "you"}}, nil,
			"hello you\n"},
		{"RawMessage keeps the document's key order (compact)", Options{}, ordered,
			`{"z":1,"a":{"y":true,"b":null},"m":[3,2]}` + "\n"},
		{"RawMessage keeps the document's key order (pretty)", Options{Pretty: true}, json.RawMessage(`{"z":1,"a":2}`),
			"{\n  \"z\": 1,\n  \"a\": 2\n}\n"},
		{"--jq over a RawMessage", Options{JQ: ".a.y"}, ordered, "true\n"},
		{"big integers are not rounded through --jq", Options{JQ: ".n"}, json.RawMessage(`{"n":12345678901234567}`),
			"12345678901234567\n"},
		{"floats survive --jq", Options{JQ: ".n"}, json.RawMessage(`{"n":1.5}`), "1.5\n"},
		{"Go slices of maps are normalised for gojq", Options{JQ: ".[0].k"}, []map[string]any{{"k": "v"}}, "\"v\"\n"},
		{"no HTML escaping", Options{JQ: ".html"}, doc, "\"<a&b>\"\n"},
		{"Text is printed verbatim", Options{}, Text("#!/bin/sh\necho \"hi\"\n"), "#!/bin/sh\necho \"hi\"\n"},
		{"Text gets a final newline", Options{}, Text("line"), "line\n"},
		{"Text is a JSON string through --jq", Options{JQ: "."}, Text("a\"b"), "\"a\\\"b\"\n"},
		{"colour never", Options{Color: "never", Pretty: true}, doc,
			"{\n  \"a\": [\n    1,\n    \"x\"\n  ],\n  \"b\": 1,\n  \"html\": \"<a&b>\"\n}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := render(t, tc.opts, tc.in)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if stdout != tc.want {
				t.Errorf("stdout:\n got %q\nwant %q", stdout, tc.want)
			}
			if stderr != "" {
				t.Errorf("stderr should be empty, got %q", stderr)
			}
			if ansi.MatchString(stdout) {
				t.Errorf("colour escapes written to a buffer: %q", stdout)
			}
		})
	}
}

func TestPrepareRejects(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string // substring of the message
	}{
		{"jq syntax error", Options{JQ: ".a | | .b"}, "invalid jq program"},
		{"jq compile error: unknown function", Options{JQ: "nosuchfn(1)"}, "nosuchfn"},
		{"jq variable without --arg", Options{JQ: "$who"}, "$who"},
		{"--pretty with --compact", Options{Pretty: true, Compact: true}, "--pretty and --compact"},
		{"bad --color", Options{Color: "sometimes"}, "--color"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			p := New(tc.opts, &out, &errb)
			err := p.Prepare()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Prepare() = %v, want *output.Error", err)
			}
			if e.Reason != "usage" || e.ExitCode() != ExitUsage {
				t.Errorf("reason %q exit %d, want usage exit 2", e.Reason, e.ExitCode())
			}
			if !strings.Contains(e.Message, tc.want) {
				t.Errorf("message %q does not mention %q", e.Message, tc.want)
			}
			if out.Len() != 0 || errb.Len() != 0 {
				t.Errorf("Prepare wrote output: stdout %q stderr %q", out.String(), errb.String())
			}
		})
	}
}

func TestJQRuntimeError(t *testing.T) {
	for _, prog := range []string{".a.b", `error("custom")`, ".[] | tonumber"} {
		t.Run(prog, func(t *testing.T) {
			stdout, _, err := render(t, Options{JQ: prog}, map[string]any{"a": "string", "x": "nan"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *output.Error", err)
			}
			if e.Reason != "bad-jq" || e.ExitCode() != ExitUsage {
				t.Errorf("reason %q exit %d, want bad-jq exit 2", e.Reason, e.ExitCode())
			}
			if stdout != "" {
				t.Errorf("stdout should be empty after a jq error, got %q", stdout)
			}
		})
	}
}

func TestColour(t *testing.T) {
	doc := json.RawMessage(`{"s":"a \"quoted\": value","n":-1.5e3,"t":true,"f":false,"z":null,"arr":[1,"x",{"k":"v"}],"e":{}}`)
	plain := func(opts Options) string {
		opts.Color = "never"
		out, _, err := render(t, opts, doc)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("always colours a buffer, and stripping the escapes gives the plain output", func(t *testing.T) {
		for _, opts := range []Options{{Pretty: true}, {Compact: true}} {
			opts.Color = "always"
			out, _, err := render(t, opts, doc)
			if err != nil {
				t.Fatal(err)
			}
			if !ansi.MatchString(out) {
				t.Fatalf("no ANSI escapes with --color always: %q", out)
			}
			if got, want := ansi.ReplaceAllString(out, ""), plain(opts); got != want {
				t.Errorf("colour changed the text:\n got %q\nwant %q", got, want)
			}
		}
	})
	t.Run("keys and values have different colours", func(t *testing.T) {
		out, _, _ := render(t, Options{Color: "always"}, json.RawMessage(`{"k":"v"}`))
		key := regexp.MustCompile("(\x1b\\[[0-9;]*m)\"k\"").FindStringSubmatch(out)
		val := regexp.MustCompile("(\x1b\\[[0-9;]*m)\"v\"").FindStringSubmatch(out)
		if key == nil || val == nil || key[1] == val[1] {
			t.Errorf("key and string value should be coloured differently: %q", out)
		}
	})
	t.Run("auto on a buffer is off", func(t *testing.T) {
		out, _, _ := render(t, Options{Color: "auto"}, doc)
		if ansi.MatchString(out) {
			t.Errorf("colour on a non-terminal: %q", out)
		}
	})
	t.Run("never is off", func(t *testing.T) {
		if out := plain(Options{Pretty: true}); ansi.MatchString(out) {
			t.Errorf("colour with never: %q", out)
		}
	})
	t.Run("NO_COLOR does not override an explicit always", func(t *testing.T) {
		t.Setenv("NO_COLOR", "1")
		out, _, _ := render(t, Options{Color: "always"}, doc)
		if !ansi.MatchString(out) {
			t.Errorf("--color always should win over NO_COLOR: %q", out)
		}
	})
	t.Run("colour decision for auto", func(t *testing.T) {
		p := New(Options{Color: "auto"}, &bytes.Buffer{}, &bytes.Buffer{})
		t.Setenv("NO_COLOR", "1")
		if p.colorFor(true) {
			t.Error("NO_COLOR=1 should turn colour off on a terminal")
		}
		t.Setenv("NO_COLOR", "")
		if !p.colorFor(true) {
			t.Error("an empty NO_COLOR should not turn colour off (no-color.org)")
		}
		if p.colorFor(false) {
			t.Error("auto should be off on a non-terminal")
		}
	})
}

func TestFail(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantDoc  string
		wantExit int
	}{
		{"reason, message and details, in that order", Errorf("threw", "boom").With("command", "flags.set").With("waitedMs", 12),
			`{"ok":false,"reason":"threw","error":"boom","command":"flags.set","waitedMs":12}`, 1},
		{"details cannot override the contract keys", Errorf("usage", "bad").With("ok", true).With("reason", "x").With("error", "y"),
			`{"ok":false,"reason":"usage","error":"bad"}`, 2},
		{"RawMessage details are embedded as JSON", Errorf("no-page-connected", "no page").With("connection", json.RawMessage(`{"connected": false}`)),
			`{"ok":false,"reason":"no-page-connected","error":"no page","connection":{"connected":false}}`, 5},
		{"no HTML escaping in messages", Errorf("refused", "Blocked <host> & co"),
			`{"ok":false,"reason":"refused","error":"Blocked <host> & co"}`, 6},
		{"a wrapped *Error is found", fmt.Errorf("context: %w", Errorf("unknown-command", "nope")),
			`{"ok":false,"reason":"unknown-command","error":"nope"}`, 3},
		{"a plain error is reason failed", errors.New("disk on fire"),
			`{"ok":false,"reason":"failed","error":"disk on fire"}`, 1},
		{"a deadline is a timeout", fmt.Errorf("waiting: %w", context.DeadlineExceeded),
			`{"ok":false,"reason":"timeout","error":"timed out: waiting: context deadline exceeded"}`, 4},
		{"a cancellation is interrupted", context.Canceled,
			`{"ok":false,"reason":"interrupted","error":"interrupted"}`, 130},
		{"Exit overrides the reason's code", &Error{Reason: "threw", Message: "m", Exit: 9},
			`{"ok":false,"reason":"threw","error":"m"}`, 9},
		{"an unknown reason exits 1", Errorf("brand-new-reason", "m"),
			`{"ok":false,"reason":"brand-new-reason","error":"m"}`, 1},
		{"Wrap keeps the cause in the message", Wrap("io-error", errors.New("EACCES"), "cannot write"),
			`{"ok":false,"reason":"io-error","error":"cannot write: EACCES"}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			p := New(Options{}, &out, &errb)
			code := p.Fail(tc.err)
			if code != tc.wantExit {
				t.Errorf("exit %d, want %d", code, tc.wantExit)
			}
			if out.Len() != 0 {
				t.Errorf("stdout must be empty on failure, got %q", out.String())
			}
			if got := errb.String(); got != tc.wantDoc+"\n" {
				t.Errorf("stderr:\n got %q\nwant %q", got, tc.wantDoc+"\n")
			}
			var doc map[string]any
			if err := json.Unmarshal(errb.Bytes(), &doc); err != nil {
				t.Fatalf("stderr is not one JSON document: %v", err)
			}
			if doc["ok"] != false {
				t.Errorf("ok = %v, want false", doc["ok"])
			}
		})
	}
}

func TestFailJSONErrorsEvenWithColourAlways(t *testing.T) {
	var out, errb bytes.Buffer
	p := New(Options{Color: "always", JSONErrors: true}, &out, &errb)
	p.Fail(Errorf("timeout", "slow"))
	if got, want := errb.String(), `{"ok":false,"reason":"timeout","error":"slow"}`+"\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

func TestWarnGoesToStderrOnly(t *testing.T) {
	var out, errb bytes.Buffer
	p := New(Options{}, &out, &errb)
	p.Warn("ambiguous", "two pages", map[string]any{"reporters": 2})
	if out.Len() != 0 {
		t.Errorf("warning on stdout: %q", out.String())
	}
	if got, want := errb.String(), `{"message":"two pages","reporters":2,"warning":"ambiguous"}`+"\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

// documentedExit is DESIGN.md's exit-code table: code → example reasons.
var documentedExit = map[int][]string{
	1:   {"threw", "torn-down", "navigation-failed"},
	2:   {"usage", "bad-input"},
	3:   {"unknown-command", "no-match", "no-such-tab", "stale-ref"},
	4:   {"timeout"},
	5:   {"no-page-connected", "relay-unreachable", "no-browser"},
	6:   {"run-not-allowed", "cross-origin", "non-loopback-host", "path-refused", "not-owned"},
	7:   {"ambiguous-instance", "ambiguous-match", "ambiguous-reporters"},
	130: {"interrupted"},
}

func TestReasonTable(t *testing.T) {
	reasons := Reasons()
	if len(reasons) == 0 {
		t.Fatal("Reasons() is empty")
	}
	known := map[string]int{}
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for i, r := range reasons {
		if _, ok := documentedExit[r.Exit]; !ok {
			t.Errorf("reason %q has exit %d, which is not a documented exit code", r.Reason, r.Exit)
		}
		if !kebab.MatchString(r.Reason) {
			t.Errorf("reason %q is not kebab-case", r.Reason)
		}
		if ExitCodeFor(r.Reason) != r.Exit {
			t.Errorf("ExitCodeFor(%q) = %d, Reasons() says %d", r.Reason, ExitCodeFor(r.Reason), r.Exit)
		}
		// The code printed by Fail is the code of the table.
		if code := New(Options{}, &bytes.Buffer{}, &bytes.Buffer{}).Fail(Errorf(r.Reason, "x")); code != r.Exit {
			t.Errorf("Fail(%q) exit %d, want %d", r.Reason, code, r.Exit)
		}
		if i > 0 {
			prev := reasons[i-1]
			if prev.Exit > r.Exit || (prev.Exit == r.Exit && prev.Reason >= r.Reason) {
				t.Errorf("Reasons() not sorted by code then name at %v, %v", prev, r)
			}
		}
		known[r.Reason] = r.Exit
	}
	for code, names := range documentedExit {
		for _, name := range names {
			got, ok := known[name]
			if !ok {
				t.Errorf("documented reason %q is missing from Reasons()", name)
				continue
			}
			if got != code {
				t.Errorf("reason %q exits %d, DESIGN.md documents %d", name, got, code)
			}
		}
	}
	// Every reason the relay can answer (spec §4.9) has a code of its own.
	relay := map[string]int{
		"bad-body": 2, "bad-command-id": 2, "protocol-mismatch": 6,
		"non-loopback-host": 6, "cross-origin": 6, "run-not-allowed": 6,
		"unknown-route": 3, "unknown-command": 3, "torn-down": 1, "threw": 1,
		"middleware-error": 1, "no-outcome": 1, "no-page-connected": 5,
		"server-closing": 5, "timeout": 4,
	}
	for name, code := range relay {
		if got, ok := known[name]; !ok || got != code {
			t.Errorf("relay reason %q: listed %v, exit %d; want exit %d", name, ok, got, code)
		}
	}
}

// The ceiling on a printed result: over it nothing reaches stdout and the
// error is result-too-large with the size; --jq narrowing a large value under
// it prints; a negative MaxBytes lifts it; the default is 16 MiB.
func TestResultCeiling(t *testing.T) {
	big := json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`)
	for _, c := range []struct {
		name string
		opts Options
		in   any
		size int64
	}{
		{"raw JSON", Options{MaxBytes: 500}, big, 1002},
		{"a Go value", Options{MaxBytes: 500}, map[string]any{"s": strings.Repeat("y", 600)}, 608},
		{"pretty output", Options{MaxBytes: 30, Pretty: true}, map[string]any{"a": 1, "b": 2, "c": 3, "d": 4}, 43},
		{"text", Options{MaxBytes: 10}, Text("0123456789ab"), 12},
		{"every jq output counts", Options{MaxBytes: 25, JQ: ".[]"}, []any{"aaaaaaaaaa", "bbbbbbbbbb"}, 26},
	} {
		out, _, err := render(t, c.opts, c.in)
		e := AsError(err)
		if e == nil || e.Reason != "result-too-large" || e.Details["bytes"] != c.size || e.Details["maxBytes"] != c.opts.MaxBytes || out != "" || e.ExitCode() != ExitFailed {
			t.Errorf("%s: %q %v %v", c.name, out, err, e)
		}
	}
	if out, _, err := render(t, Options{MaxBytes: 500, JQ: "length"}, big); err != nil || out != "1000\n" {
		t.Errorf("--jq under the ceiling: %q %v", out, err)
	}
	if out, _, err := render(t, Options{MaxBytes: -1}, big); err != nil || len(out) != 1003 {
		t.Errorf("no ceiling: %d %v", len(out), err)
	}
	if p := New(Options{}, nil, nil); p.MaxBytes() != 16<<20 {
		t.Errorf("default ceiling %d", p.MaxBytes())
	}
}
