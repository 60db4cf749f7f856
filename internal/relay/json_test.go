package relay

import (
	"fmt"
	"strings"
	"testing"
)

// Each case is what JSON.stringify(JSON.parse(in), null, 2) prints in Node.
func TestJSONRoundTripMatchesJavaScript(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"scalars", `[true,false,null,"s",0,-0,1.0,1e2,1.5e-7,123456789012345678901234,1e21,0.000001,-2.50]`,
			"[\n  true,\n  false,\n  null,\n  \"s\",\n  0,\n  0,\n  1,\n  100,\n  1.5e-7,\n  1.2345678901234569e+23,\n  1e+21,\n  0.000001,\n  -2.5\n]"},
		{"overflow is Infinity, printed null", `[1e400,-1e400,1e-400]`, "[\n  null,\n  null,\n  0\n]"},
		{"empty containers stay inline", `{"a":[],"b":{},"c":[{}]}`,
			"{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    {}\n  ]\n}"},
		{"key order kept", `{"z":1,"a":2,"m":3}`, "{\n  \"z\": 1,\n  \"a\": 2,\n  \"m\": 3\n}"},
		{"duplicate key: last value, first position", `{"a":1,"b":2,"a":3}`, "{\n  \"a\": 3,\n  \"b\": 2\n}"},
		{"array-index keys first, ascending", `{"b":1,"10":2,"a":3,"2":4,"01":5,"4294967295":6}`,
			"{\n  \"2\": 4,\n  \"10\": 2,\n  \"b\": 1,\n  \"a\": 3,\n  \"01\": 5,\n  \"4294967295\": 6\n}"},
		{"escapes like JSON.stringify", `["<&>\u2028\u00e9\u0001\b\f\n\r\t\"\\/"]`,
			"[\n  \"<&>\u2028é\\u0001\\b\\f\\n\\r\\t\\\"\\\\/\"\n]"},
		{"surrounding whitespace", " \t\n{\"a\":1}\r\n", "{\n  \"a\": 1\n}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := parseJSON([]byte(c.in))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := string(render(v)); got != c.want+"\n" {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestLargeObjectDuplicatesAndIndexKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `"k%d":1,`, i)
	}
	b.WriteString(`"k0":2,"7":3}`)
	v, err := parseJSON([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(object)
	if len(o) != 41 || o[0].key != "7" || o[1].key != "k0" || o[1].val != number("2") {
		t.Fatalf("got %d keys, first %q=%v, second %q=%v", len(o), o[0].key, o[0].val, o[1].key, o[1].val)
	}
}

func TestParseRefusesWhatJSONParseRefuses(t *testing.T) {
	for _, in := range []string{"", " ", "{", "[1,]", `{"a" 1}`, "01", "{} {}", "{}x", "'a'", "NaN", "\ufeff{}",
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)} {
		if _, err := parseJSON([]byte(in)); err == nil {
			t.Errorf("parseJSON(%.20q) accepted", in)
		}
	}
}

func TestJSTrim(t *testing.T) {
	if got := jsTrim("\ufeff\u00a0 \t\r\n\u2028{}\u3000"); got != "{}" {
		t.Errorf("got %q", got)
	}
	// U+0085 is space to Go but not to JavaScript.
	if got := jsTrim("\u0085"); got != "\u0085" {
		t.Errorf("got %q", got)
	}
}
