package e2e

import (
	"testing"
	"time"
)

// Issue 19.4: --timeout is a toolbar command's whole deadline, split across its
// requests: a command that hangs in the page ends exit 4 within it, through the
// relay and over CDP.
func TestToolbarTimeoutIsTheWholeCommands(t *testing.T) {
	needBrowser(t)
	rid, tab := openReporter(t, "timeout", "")
	for name, via := range bothTransports(rid, tab) {
		r := dtb(t, append([]string{"run", "demo.sleep", "ms=60000", "--timeout", "2s"}, via...)...)
		r.Fails(t, 4, "timeout")
		t.Logf("%s: exit %d after %v", name, r.Code, r.Elapsed.Round(time.Millisecond))
		if r.Elapsed > 2500*time.Millisecond {
			t.Errorf("%s: --timeout 2s ended after %v", name, r.Elapsed)
		}
	}
}

// Issue 22.7: over CDP, a bridge whose read() returns a promise that never settles
// is a timeout (exit 4), not an empty snapshot with connected: true.
func TestHungReadIsATimeout(t *testing.T) {
	needBrowser(t)
	tab := openTab(t, shared.page("report=0"))
	evalIn(t, tab, `(__DEV_TOOLBAR__.instances.playground.read = () => new Promise(() => {}), true)`)
	dtb(t, "state", "--via", "cdp", "--tab", tab, "--timeout", "2s").Fails(t, 4, "timeout")
}
