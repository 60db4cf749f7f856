package commands

import "testing"

func TestScreenshotFormat(t *testing.T) {
	cases := []struct {
		format string
		given  bool
		out    string
		want   string
		usage  bool
	}{
		{"jpeg", false, "", "jpeg", false},
		{"jpeg", false, "a.png", "png", false},
		{"jpeg", false, "a.PNG", "png", false},
		{"jpeg", false, "a.jpg", "jpeg", false},
		{"jpeg", false, "a.bin", "jpeg", false},
		{"png", true, "a", "png", false},
		{"png", true, "a.png", "png", false},
		{"jpg", true, "a.jpeg", "jpg", false},
		{"jpeg", true, "a.png", "", true},
		{"png", true, "a.jpg", "", true},
	}
	for _, c := range cases {
		got, err := screenshotFormat(c.format, c.given, c.out)
		if (err != nil) != c.usage || got != c.want {
			t.Errorf("screenshotFormat(%q, %v, %q) = %q, %v; want %q, usage error %v", c.format, c.given, c.out, got, err, c.want, c.usage)
		}
		if err != nil && !isReason(err, "usage") {
			t.Errorf("%q %q: reason of %v", c.format, c.out, err)
		}
	}
}
