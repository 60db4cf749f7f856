package read

import (
	"strings"
	"testing"
	"time"
)

func TestParseInclude(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{"all", nil, false},
		{"text", []string{"text"}, false},
		{" Text , links,,", []string{"text", "links"}, false},
		{"title,url,readiness,frames", []string{"title", "url", "readiness", "frames"}, false},
		{"text,bogus", nil, true},
	} {
		got, err := ParseInclude(c.in)
		if (err != nil) != c.bad {
			t.Errorf("ParseInclude(%q): err %v", c.in, err)
			continue
		}
		if c.bad {
			if reasonOf(err) != "usage" {
				t.Errorf("ParseInclude(%q): reason %q", c.in, reasonOf(err))
			}
			continue
		}
		if c.want == nil && got != nil || len(got) != len(c.want) {
			t.Errorf("ParseInclude(%q) = %v, want %v", c.in, got, c.want)
		}
		for _, k := range c.want {
			if !got[k] {
				t.Errorf("ParseInclude(%q) lacks %s", c.in, k)
			}
		}
	}
}

func TestReadyDefaults(t *testing.T) {
	o := ReadyOptions{}.withDefaults()
	if o.Quiet != 800*time.Millisecond || o.Timeout != 8*time.Second || o.Stretch != 30*time.Second || o.Probe != 50*time.Millisecond {
		t.Errorf("defaults %+v", o)
	}
	o = ReadyOptions{Quiet: -1, Timeout: 45 * time.Second}.withDefaults()
	if o.Quiet != 0 || o.Stretch != 45*time.Second {
		t.Errorf("no quiet / long window: %+v", o)
	}
	if (Conditions{}).Any() || !(Conditions{URL: "x"}).Any() {
		t.Error("Conditions.Any")
	}
}

func TestReadinessWarning(t *testing.T) {
	if w := (&Readiness{}).Warning(); w != "" {
		t.Errorf("no timeout, warning %q", w)
	}
	if w := (&Readiness{TimedOut: true, Loaded: true, Ms: 8000}).Warning(); !strings.Contains(w, "did not stay quiet") || !strings.Contains(w, "8s") {
		t.Errorf("quiet warning %q", w)
	}
	if w := (&Readiness{TimedOut: true, Ms: 30000}).Warning(); !strings.Contains(w, "did not finish loading") {
		t.Errorf("loading warning %q", w)
	}
	e := timeoutError(ReadyOptions{}, &Readiness{Ms: 1000, Conditions: map[string]bool{"css": false, "url": true}})
	if e.Reason != "timeout" || !strings.Contains(e.Message, "--wait-css") || strings.Contains(e.Message, "--wait-url") {
		t.Errorf("timeout error %+v", e)
	}
}
