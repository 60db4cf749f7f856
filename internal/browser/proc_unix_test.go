//go:build unix

package browser

import "testing"

// Chromium's helpers carry their arguments as one space-separated title
// (setproctitle); the browser process keeps NUL-separated arguments.
func TestHasArgPrefix(t *testing.T) {
	for _, c := range []struct {
		cmdline string
		want    bool
	}{
		{"/usr/lib/chromium/chromium-headless-shell --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US\x00", true},
		{"/usr/lib/chromium/chromium-headless-shell\x00--type=renderer\x00--headless\x00", true},
		{"/usr/lib/chromium/chromium-headless-shell\x00--headless\x00--user-data-dir=/tmp/p\x00", false},
		{"/bin/sh\x00-e\x00/usr/bin/chromium\x00--no-type=x\x00", false},
		{"", false},
	} {
		if got := hasArgPrefix([]byte(c.cmdline), []byte("--type=")); got != c.want {
			t.Errorf("hasArgPrefix(%q) = %v, want %v", c.cmdline, got, c.want)
		}
	}
}
