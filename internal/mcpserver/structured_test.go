package mcpserver

import (
	"encoding/json"
	"testing"
)

// A result is structured content when it is one JSON object; a tool that
// declares an output schema gets every other result wrapped, as clients
// require structured content from it on every call.
func TestStructured(t *testing.T) {
	data := Tool{Name: "state", OutputSchema: true}
	ack := Tool{Name: "eval"}
	cases := []struct {
		tool   Tool
		stdout string
		want   string // the structured content as JSON; "" for none
	}{
		{data, "{\"a\":1,\"b\":[2]}\n", `{"a":1,"b":[2]}`},
		{ack, "{\"a\":1}\n", `{"a":1}`},
		{data, "\"jpeg\"\n", `{"result":"jpeg"}`},
		{data, "1\n2\n", `{"results":[1,2]}`},
		{data, "[1,2]\n", `{"result":[1,2]}`},
		{data, "not json\n", `{"result":"not json"}`},
		{data, "", `{"result":""}`},
		{ack, "\"x\"\n", ""},
		{ack, "[{\"a\":1}]\n", ""},
		{ack, "{\"a\":1}\n{\"b\":2}\n", ""},
	}
	for _, c := range cases {
		got := structured(c.tool, []byte(c.stdout))
		var s string
		if got != nil {
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			s = string(b)
		}
		if s != c.want {
			t.Errorf("%s %q: structured %s, want %s", c.tool.Name, c.stdout, s, c.want)
		}
	}
}
