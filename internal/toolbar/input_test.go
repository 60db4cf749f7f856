package toolbar

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the JSON sent; "" means no input
	}{
		{"no arguments: no input", nil, ""},
		{"one JSON document", []string{`{"key":"search.rank","value":9}`}, `{"key":"search.rank","value":9}`},
		{"one JSON document that is not an object is kept for Check", []string{`[1,2]`}, `[1,2]`},
		{"one JSON string document", []string{`"a=b"`}, `"a=b"`},
		{"pairs: value=9 is a number", []string{"key=search.rank", "value=9"}, `{"key":"search.rank","value":9}`},
		{"value=true is a boolean", []string{"key=new-header", "value=true"}, `{"key":"new-header","value":true}`},
		{"value=false is a boolean", []string{"value=false"}, `{"value":false}`},
		{"value=null is null", []string{"value=null"}, `{"value":null}`},
		{"value=-1.5 is a number", []string{"value=-1.5"}, `{"value":-1.5}`},
		{"text that is not JSON is a string", []string{"key=search.rank"}, `{"key":"search.rank"}`},
		{"text with quotes is escaped", []string{`msg=he said "hi"`}, `{"msg":"he said \"hi\""}`},
		{"an empty value is the empty string", []string{"key="}, `{"key":""}`},
		{"a JSON object value", []string{`v={"a":[1]}`}, `{"v":{"a":[1]}}`},
		{"key:=JSON forces JSON", []string{`ids:=[1,"b"]`, `n:=9`}, `{"ids":[1,"b"],"n":9}`},
		{"key==text forces a string", []string{"key==9", "flag==true"}, `{"key":"9","flag":"true"}`},
		{"key== is the empty string", []string{"key=="}, `{"key":""}`},
		{"key==text keeps later equals signs", []string{"expr===x=y"}, `{"expr":"=x=y"}`},
		{"the order typed is kept", []string{"value=1", "key=a"}, `{"value":1,"key":"a"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ParseArgs(tc.args)
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", tc.args, err)
			}
			if tc.want == "" {
				if in.Value != nil {
					t.Fatalf("want no input, got %s", in.Value)
				}
				return
			}
			if string(in.Value) != tc.want {
				t.Errorf("ParseArgs(%q) = %s, want %s", tc.args, in.Value, tc.want)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		field string // the field named in details ("" when none applies)
		says  string // substring of the message
	}{
		{"bad JSON after :=", []string{"key:={oops"}, "key", "key:= wants JSON"},
		{"empty JSON after :=", []string{"key:="}, "key", "key:="},
		{"duplicate key", []string{"key=a", "key=b"}, "key", `"key" given twice`},
		{"duplicate key across syntaxes", []string{"n=1", "n:=2"}, "n", `"n" given twice`},
		{"a non-pair argument among pairs", []string{"key=a", "oops"}, "", `"oops" is not key=value`},
		{"an empty key", []string{"=x", "a=b"}, "", `"=x"`},
		{"a lone := ", []string{":=1", "a=b"}, "", `":=1"`},
		{"one argument that is neither JSON nor a pair", []string{"oops"}, "", `"oops" is neither JSON nor key=value`},
		{"one broken JSON document", []string{`{"key":`}, "", "neither JSON nor key=value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseArgs(tc.args)
			e := wantBadInput(t, err, tc.says)
			if tc.field != "" && e.Details["field"] != tc.field {
				t.Errorf("details field = %v, want %q", e.Details["field"], tc.field)
			}
		})
	}
}

func TestFromJSON(t *testing.T) {
	in, err := FromJSON([]byte("  \n"), "stdin")
	if err != nil || in.Value != nil {
		t.Errorf("blank input: %s %v, want no input", in.Value, err)
	}
	in, err = FromJSON([]byte(" {\"a\":1}\n"), "stdin")
	if err != nil || string(in.Value) != `{"a":1}` {
		t.Errorf("got %s %v", in.Value, err)
	}
	_, err = FromJSON([]byte("{"), "input.json")
	wantBadInput(t, err, "input.json")
}

// The commands the checks run against, as the page declares them (spec §1.5).
const commandsDoc = `{"instanceId":"p","allowRun":true,"connection":{},"commands":[
 {"id":"flags.set","label":"Set a feature flag override","input":{"fields":{
   "key":{"type":"string","required":true,"description":"The flag's key"},
   "value":{"type":["boolean","string","number"]}}}},
 {"id":"theme.set","label":"Set the theme","input":{"fields":{
   "mode":{"type":"enum","values":["light","dark",null],"default":"light"},
   "level":{"type":"enum","values":[1,2,"3"]},
   "contrast":{"type":"number"},
   "on":{"type":"boolean"}}}},
 {"id":"env.info","label":"Environment"},
 {"id":"variant.set","label":"Set a variant","input":{"fields":{
   "value":{"type":["boolean","string","number"],"description":"The value to force. ` + "`null`" + ` is refused unless the flag is a variant whose ` + "`variants`" + ` include it."}}}},
 {"id":"flags.toggle.new-header","label":"Toggle flag: New header"}
]}`

func command(t *testing.T, id string) *Command {
	t.Helper()
	list, err := CommandList(json.RawMessage(commandsDoc))
	if err != nil {
		t.Fatal(err)
	}
	c, err := FindCommand(list, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func parse(t *testing.T, args ...string) Input {
	t.Helper()
	in, err := ParseArgs(args)
	if err != nil {
		t.Fatalf("ParseArgs(%q): %v", args, err)
	}
	return in
}

func TestCheckAccepts(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		args []string
		want string // "" means no input is sent
	}{
		{"flags.set with a number", "flags.set", []string{"key=search.rank", "value=9"}, `{"key":"search.rank","value":9}`},
		{"polymorphic: boolean", "flags.set", []string{"key=new-header", "value=true"}, `{"key":"new-header","value":true}`},
		{"polymorphic: string", "flags.set", []string{"key=new-header", "value=yes"}, `{"key":"new-header","value":"yes"}`},
		{"optional field omitted", "flags.set", []string{"key=search.rank"}, `{"key":"search.rank"}`},
		{"a string field typed key=123 is sent as \"123\"", "flags.set", []string{"key=123"}, `{"key":"123"}`},
		{"a string field typed key=true is sent as \"true\"", "flags.set", []string{"key=true", "value=1"}, `{"key":"true","value":1}`},
		{"a string field typed key=null is sent as \"null\"", "flags.set", []string{"key=null"}, `{"key":"null"}`},
		{"a JSON document", "flags.set", []string{`{"value":false,"key":"k"}`}, `{"value":false,"key":"k"}`},
		{"enum member", "theme.set", []string{"mode=dark"}, `{"mode":"dark"}`},
		{"enum member null", "theme.set", []string{"mode=null"}, `{"mode":null}`},
		{"enum number member", "theme.set", []string{"level=2"}, `{"level":2}`},
		{"enum number member written 2.0", "theme.set", []string{"level:=2.0"}, `{"level":2.0}`},
		{"enum string member typed as a number", "theme.set", []string{"level=3"}, `{"level":"3"}`},
		{"number field", "theme.set", []string{"contrast=1.25", "on=false"}, `{"contrast":1.25,"on":false}`},
		{"no input for optional fields", "theme.set", nil, ""},
		{"no input for a command without fields", "env.info", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(command(t, tc.cmd), parse(t, tc.args...))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if tc.want == "" {
				if got != nil {
					t.Fatalf("want no input, got %s", got)
				}
				return
			}
			if string(got) != tc.want {
				t.Errorf("sent %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCheckRefuses(t *testing.T) {
	tests := []struct {
		name  string
		cmd   string
		args  []string
		field string // detail "field", "" when the error is about the whole input
		says  []string
	}{
		{"unknown field", "flags.set", []string{"key=a", "bogus=1"}, "bogus", []string{`"bogus"`, "key, value"}},
		{"missing required field", "flags.set", []string{"value=1"}, "key", []string{`missing required field "key"`}},
		{"missing required field, no input at all", "flags.set", nil, "key", []string{`"key"`}},
		{"wrong type: forced JSON number for a string", "flags.set", []string{"key:=123"}, "key", []string{`"key"`, "must be string", "number"}},
		{"wrong type in a JSON document", "flags.set", []string{`{"key":123}`}, "key", []string{`"key"`, "must be string"}},
		{"polymorphic list refuses an array", "flags.set", []string{"key=a", "value:=[1]"}, "value", []string{`"value"`, "boolean or string or number", "array"}},
		{"polymorphic list refuses null, hinting --no-check", "flags.set", []string{"key=a", "value=null"}, "value", []string{`"value"`, "got null;", "do not allow null", "omit value", "--no-check"}},
		{"null where the description allows it: --no-check, quoting it", "variant.set", []string{"value=null"}, "value", []string{"do not allow null", "description mentions it", "variants", "--no-check"}},
		{"polymorphic list refuses an object", "flags.set", []string{"key=a", `value={"x":1}`}, "value", []string{`"value"`, "object"}},
		{"enum: not a member", "theme.set", []string{"mode=purple"}, "mode", []string{`"mode"`, `"light", "dark", null`, `"purple"`}},
		{"enum: number not a member", "theme.set", []string{"level=4"}, "level", []string{`"level"`, `1, 2, "3"`}},
		{"enum: forced string not a member", "theme.set", []string{"level==1"}, "level", []string{`"level"`}},
		{"number field given text", "theme.set", []string{"contrast=high"}, "contrast", []string{`"contrast"`, "must be number", "string"}},
		{"boolean field given a string", "theme.set", []string{"on==true"}, "on", []string{`"on"`, "must be boolean"}},
		{"command without input schema given input", "env.info", []string{"x=1"}, "", []string{"env.info declares no input", "--no-check"}},
		{"command without input schema given a JSON document", "flags.toggle.new-header", []string{`{}`}, "", []string{"declares no input"}},
		{"input not an object: array", "flags.set", []string{`["a"]`}, "", []string{"takes an object", "key, value"}},
		{"input not an object: number", "flags.set", []string{`9`}, "", []string{"takes an object"}},
		{"input not an object: null", "flags.set", []string{`null`}, "", []string{"takes an object"}},
		{"input not an object: string", "flags.set", []string{`"search.rank"`}, "", []string{"takes an object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(command(t, tc.cmd), parse(t, tc.args...))
			if got != nil {
				t.Errorf("a refused input returned %s", got)
			}
			e := wantBadInput(t, err, tc.says...)
			if strings.Contains(e.Message, "==null") {
				t.Errorf("the hint sends null as the string \"null\": %s", e.Message)
			}
			if tc.field != "" {
				if e.Details["field"] != tc.field {
					t.Errorf("details field = %v, want %q", e.Details["field"], tc.field)
				}
				if !strings.Contains(e.Message, `"`+tc.field+`"`) {
					t.Errorf("message %q does not name the field %q", e.Message, tc.field)
				}
			}
			if e.Details["command"] != tc.cmd {
				t.Errorf("details command = %v, want %q", e.Details["command"], tc.cmd)
			}
		})
	}
}

func TestFindCommand(t *testing.T) {
	list, _ := CommandList(json.RawMessage(commandsDoc))
	_, err := FindCommand(list, "flags.sett")
	var e *output.Error
	if !errors.As(err, &e) || e.Reason != "unknown-command" || e.ExitCode() != output.ExitNotFound {
		t.Fatalf("got %v, want unknown-command exit 3", err)
	}
	if e.Details["command"] != "flags.sett" {
		t.Errorf("details command = %v", e.Details["command"])
	}
	_, err = FindCommand(list, "flags.s")
	if !errors.As(err, &e) || e.Details["suggestion"] != "flags.set" {
		t.Errorf("no suggestion for a prefix: %v", err)
	}
	if _, err := CommandList(json.RawMessage(`{"commands":"nope"}`)); err == nil {
		t.Error("CommandList accepted a commands value that is not an array")
	}
}

func TestCheckConnection(t *testing.T) {
	with := func(stale, ambiguous bool, extra map[string]any) json.RawMessage {
		conn := map[string]any{
			"connected": !stale, "stale": stale, "ambiguous": ambiguous, "reporters": map[bool]int{true: 2, false: 1}[ambiguous], "ageMs": 4000, "reporterId": "tab-b",
		}
		for k, v := range extra {
			conn[k] = v
		}
		b, _ := json.Marshal(map[string]any{"x": 1, "connection": conn})
		return b
	}
	doc := func(stale, ambiguous bool) json.RawMessage { return with(stale, ambiguous, nil) }
	busy := map[string]any{"busy": map[string]any{"commandId": "demo.sleep", "ageMs": 4200}}
	tests := []struct {
		name          string
		doc           json.RawMessage
		fresh, strict bool
		wantWarns     []string
		wantErr       string
		wantExit      int
		reporter      string
	}{
		{"busy is connected, not stale, even with --fresh", with(true, false, busy), true, false, []string{"busy"}, "", 0, ""},
		{"busy while connected warns", with(false, false, busy), false, false, []string{"busy"}, "", 0, ""},
		{"busy of another shape still reads as busy", with(true, false, map[string]any{"busy": true}), true, false, []string{"busy"}, "", 0, ""},
		{"busy null is not busy", with(true, false, map[string]any{"busy": nil}), true, false, nil, "stale", 5, ""},
		{"the named page's snapshot is not ambiguous", doc(false, true), false, true, nil, "", 0, "tab-b"},
		{"another page's snapshot still is", doc(false, true), false, true, nil, "ambiguous-reporters", 7, "tab-a"},
		{"connected, single page", doc(false, false), true, true, nil, "", 0, ""},
		{"stale warns", doc(true, false), false, false, []string{"stale"}, "", 0, ""},
		{"stale with --fresh fails", doc(true, false), true, false, nil, "stale", 5, ""},
		{"ambiguous warns", doc(false, true), false, false, []string{"ambiguous"}, "", 0, ""},
		{"ambiguous with --strict fails", doc(false, true), false, true, nil, "ambiguous-reporters", 7, ""},
		{"both warn", doc(true, true), false, false, []string{"stale", "ambiguous"}, "", 0, ""},
		{"--fresh wins over --strict", doc(true, true), true, true, nil, "stale", 5, ""},
		{"no connection object", json.RawMessage(`{"x":1}`), true, true, nil, "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			warns, err := CheckConnection(tc.doc, tc.fresh, tc.strict, tc.reporter)
			if tc.wantErr != "" {
				var e *output.Error
				if !errors.As(err, &e) || e.Reason != tc.wantErr || e.ExitCode() != tc.wantExit {
					t.Fatalf("got %v, want %s exit %d", err, tc.wantErr, tc.wantExit)
				}
				if _, ok := e.Details["connection"]; !ok {
					t.Error("the error does not carry the connection")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range warns {
				got = append(got, w.Reason)
				if w.Message == "" {
					t.Errorf("warning %s without a message", w.Reason)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantWarns, ",") {
				t.Errorf("warnings %v, want %v", got, tc.wantWarns)
			}
		})
	}
}

// fakeTransport answers State from a script of documents and errors; the last
// answer repeats.
type fakeTransport struct {
	mu    sync.Mutex
	steps []func() (json.RawMessage, error)
	calls int
}

func (f *fakeTransport) State(ctx context.Context) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := min(f.calls, len(f.steps)-1)
	f.calls++
	return f.steps[i]()
}
func (f *fakeTransport) Commands(context.Context) (json.RawMessage, error) { return nil, nil }
func (f *fakeTransport) Run(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

func state(connected bool) func() (json.RawMessage, error) {
	return func() (json.RawMessage, error) {
		b, _ := json.Marshal(map[string]any{"connection": map[string]any{"connected": connected}})
		return b, nil
	}
}

func fail(reason string) func() (json.RawMessage, error) {
	return func() (json.RawMessage, error) { return nil, output.Errorf(reason, "%s happened", reason) }
}

func TestWaitFor(t *testing.T) {
	pred, err := output.CompileJQ(".connection.connected", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("retries until the predicate holds", func(t *testing.T) {
		f := &fakeTransport{steps: []func() (json.RawMessage, error){
			fail("relay-unreachable"), fail("no-page-connected"), state(false), state(true),
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		doc, err := WaitFor(ctx, f, pred, nil, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if string(doc) != `{"connection":{"connected":true}}` || f.calls != 4 {
			t.Errorf("doc %s after %d calls", doc, f.calls)
		}
	})
	t.Run("a non-retryable error is returned at once", func(t *testing.T) {
		f := &fakeTransport{steps: []func() (json.RawMessage, error){fail("not-a-relay")}}
		_, err := WaitFor(context.Background(), f, pred, nil, time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.Reason != "not-a-relay" || f.calls != 1 {
			t.Errorf("got %v after %d calls", err, f.calls)
		}
	})
	t.Run("timeout reports the last state", func(t *testing.T) {
		f := &fakeTransport{steps: []func() (json.RawMessage, error){state(false)}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := WaitFor(ctx, f, pred, nil, 5*time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.Reason != "timeout" || e.ExitCode() != output.ExitTimeout {
			t.Fatalf("got %v, want timeout exit 4", err)
		}
		if _, ok := e.Details["lastState"]; !ok {
			t.Error("no lastState")
		}
	})
	t.Run("timeout reports the last error", func(t *testing.T) {
		f := &fakeTransport{steps: []func() (json.RawMessage, error){fail("no-page-connected")}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := WaitFor(ctx, f, pred, nil, 5*time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.Reason != "timeout" || e.Details["lastReason"] != "no-page-connected" {
			t.Fatalf("got %v (%v)", err, e)
		}
	})
	t.Run("the request cut by the deadline does not hide the last real error", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		f := &fakeTransport{steps: []func() (json.RawMessage, error){
			fail("no-page-connected"),
			func() (json.RawMessage, error) { <-ctx.Done(); return nil, output.Errorf("timeout", "cut") },
		}}
		_, err := WaitFor(ctx, f, pred, nil, time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.Reason != "timeout" || e.Details["lastReason"] != "no-page-connected" {
			t.Fatalf("got %v (%v)", err, e)
		}
	})
	t.Run("a cancelled wait is interrupted, not a timeout", func(t *testing.T) {
		f := &fakeTransport{steps: []func() (json.RawMessage, error){state(false)}}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := WaitFor(ctx, f, pred, nil, 5*time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.Reason != "interrupted" || e.ExitCode() != output.ExitInterrupted {
			t.Fatalf("got %v, want interrupted exit 130", err)
		}
	})
	t.Run("a deadline during the predicate is the condition not holding", func(t *testing.T) {
		// The state came, the predicate was still running at the deadline:
		// as for a false predicate, not a jq error.
		slow, err := output.CompileJQ("def f: f; f", nil)
		if err != nil {
			t.Fatal(err)
		}
		f := &fakeTransport{steps: []func() (json.RawMessage, error){state(true)}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err = WaitFor(ctx, f, slow, nil, time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.Reason != "timeout" || e.Message != "the --until condition did not hold in time" || e.Details["lastState"] == nil {
			t.Fatalf("got %v (%+v)", err, e)
		}
	})
	t.Run("a jq runtime error in the predicate stops the wait", func(t *testing.T) {
		bad, _ := output.CompileJQ(".connection.connected.x", nil)
		f := &fakeTransport{steps: []func() (json.RawMessage, error){state(true)}}
		_, err := WaitFor(context.Background(), f, bad, nil, time.Millisecond)
		var e *output.Error
		if !errors.As(err, &e) || e.ExitCode() != output.ExitUsage {
			t.Errorf("got %v, want a jq error exit 2", err)
		}
	})
}

func wantBadInput(t *testing.T, err error, says ...string) *output.Error {
	t.Helper()
	var e *output.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *output.Error", err)
	}
	if e.Reason != "bad-input" || e.ExitCode() != output.ExitUsage {
		t.Fatalf("reason %q exit %d (%s), want bad-input exit 2", e.Reason, e.ExitCode(), e.Message)
	}
	for _, s := range says {
		if !strings.Contains(e.Message, s) {
			t.Errorf("message %q does not contain %q", e.Message, s)
		}
	}
	return e
}

func TestNearest(t *testing.T) {
	ids := []string{"flags.set", "flags.reset", "flags.toggle.new-header", "theme.set", "env.info", "demo.echo"}
	tests := []struct {
		id   string
		want []string
	}{
		{"flags.sett", []string{"flags.set", "flags.reset"}},
		{"flag.set", []string{"flags.set"}},
		{"falgs.set", []string{"flags.set"}},
		{"Flags.Set", []string{"flags.set"}},
		{"flags.s", []string{"flags.set"}},
		{"flags", []string{"flags.set", "flags.reset", "flags.toggle.new-header"}},
		{"set", []string{"flags.set", "theme.set"}},
		{"flags.toggle.newheader", []string{"flags.toggle.new-header"}},
		{"env.ifno", []string{"env.info"}},
		{"completely.different", nil},
		{"x", nil},
	}
	for _, tc := range tests {
		if got := Nearest(tc.id, ids, 3); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Nearest(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
	list, _ := CommandList(json.RawMessage(commandsDoc))
	_, err := FindCommand(list, "flag.set")
	var e *output.Error
	if !errors.As(err, &e) || e.Details["suggestion"] != "flags.set" || !strings.Contains(e.Message, `did you mean "flags.set"?`) {
		t.Errorf("flag.set: %v %v", err, e.Details)
	}
}
