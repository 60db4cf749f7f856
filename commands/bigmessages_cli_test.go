package commands

import (
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// An answer or a console message far over the output ceiling is read through
// and dropped, never held: the command fails result-too-large and its memory
// stays a small fraction of the message (issue 23.7: a 200 MiB eval cost
// 893 MB, a 50 MiB console message 587 MB).
func TestBigMessagesAreNotHeld(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	e.Env = append(e.Env, "DTB_HOST=off") // the memory measured is this process's
	e.Run(t, "open", "about:blank").Exit(t, 0)
	defer e.Run(t, "browser", "stop")
	const limit = 90 << 20
	r := e.Run(t, "eval", "'x'.repeat(120 * 1024 * 1024)")
	r.Fails(t, 1, "result-too-large")
	if r.MaxRSS == 0 {
		t.Skip("no memory figure for a process here")
	}
	if r.MaxRSS > limit {
		t.Fatalf("eval of a 120 MiB string peaked at %d MiB", r.MaxRSS>>20)
	}
	e.Run(t, "eval", "console.log('y'.repeat(60 * 1024 * 1024)), 1").Exit(t, 0)
	r = e.Run(t, "console")
	r.Fails(t, 1, "result-too-large")
	if r.MaxRSS > limit {
		t.Fatalf("console with a 60 MiB message peaked at %d MiB", r.MaxRSS>>20)
	}
}
