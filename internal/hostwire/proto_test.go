package hostwire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The front's hand-written request must read back, in the host, as what
// encoding/json would have sent.
func TestRequestJSONReadsBackAsEncodingJSON(t *testing.T) {
	odd := []string{"", "plain", `q"uote`, `back\slash`, "new\nline\r\t", "\x00\x01\x1f\x7f", "<html>&amp;",
		"héllo 世界 🙂", "bad \xff\xfe utf8 \xc3", "line\u2028sep\u2029", "\xed\xa0\x80 surrogate"}
	reqs := []*Request{
		{},
		{Build: "b|1|2", Argv: []string{}, Env: map[string]string{}, OutTTY: true},
		{Build: odd[3], Argv: odd, Env: map[string]string{"DTB_A": odd[4], odd[8]: odd[9], "NO_COLOR": ""}, Cwd: odd[7], ErrTTY: true},
	}
	for i, r := range reqs {
		checkRequestJSON(t, i, r)
	}
}

func FuzzRequestJSON(f *testing.F) {
	f.Add("dtb", "type", "#q", "héllo\x00\xff", "/tmp/a b", true)
	f.Fuzz(func(t *testing.T, a0, a1, a2, envV, cwd string, tty bool) {
		checkRequestJSON(t, 0, &Request{Build: a2, Argv: []string{a0, a1, a2}, Env: map[string]string{"DTB_X": envV, a1: a0}, Cwd: cwd, OutTTY: tty})
	})
}

func checkRequestJSON(t *testing.T, i int, r *Request) {
	t.Helper()
	var got, want Request
	if err := json.Unmarshal(r.AppendJSON(nil), &got); err != nil {
		t.Fatalf("request %d: %v\n%s", i, err, r.AppendJSON(nil))
	}
	b, _ := json.Marshal(r)
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request %d reads back as\n%#v\nencoding/json's as\n%#v", i, got, want)
	}
}

// The front reads the host's exit frames by hand: every code json.Marshal
// writes reads back, and any other JSON form through encoding/json.
func TestParseExitReadsWhatTheHostWrites(t *testing.T) {
	for _, code := range []int{0, 1, 2, 5, 130, -1, 255} {
		b, _ := json.Marshal(ExitMsg{Code: code})
		if got, err := ParseExit(b); err != nil || got != code {
			t.Errorf("%s: %d, %v", b, got, err)
		}
	}
	if got, err := ParseExit([]byte(`{ "code" : 4 }`)); err != nil || got != 4 {
		t.Errorf("spaced form: %d, %v", got, err)
	}
	for _, bad := range []string{``, `{"code":}`, `{"code":x}`, `nonsense`} {
		if _, err := ParseExit([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
