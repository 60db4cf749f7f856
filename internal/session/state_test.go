package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/userdirs"
)

func TestStateAliasesAndSweep(t *testing.T) {
	st := &State{}
	now := time.Now()
	a := st.Own("A", "", "", now).Alias
	b := st.Own("B", "", "", now.Add(-TabTTL-time.Second)).Alias
	if a != "t1" || b != "t2" {
		t.Fatalf("aliases %s %s", a, b)
	}
	st.Forget("A")
	if c := st.EnsureAlias("C"); c != "t3" {
		t.Fatalf("alias reused: %s", c)
	}
	if !st.needsSweep(now) || !st.Sweep(now) || st.Tabs["B"] != nil {
		t.Fatal("expired entry not swept")
	}
	if st.AliasOf("B") != "t2" {
		t.Fatal("sweeping ownership must keep the alias")
	}
}

func TestNames(t *testing.T) {
	for s, ok := range map[string]bool{"default": true, "a.b-c_1": true, "": false, ".x": false, "a/b": false, "é": false} {
		if userdirs.ValidSessionName(s) != ok {
			t.Errorf("userdirs.ValidSessionName(%q) != %v", s, ok)
		}
	}
	if !isFullID("0123456789ABCDEF0123456789ABCDEF") || isFullID("0123") || !isAlias("t12") || isAlias("tx") {
		t.Fatal("id/alias forms")
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":          "https://example.com",
		"localhost:5173/x":     "http://localhost:5173/x",
		"127.0.0.1:8080":       "http://127.0.0.1:8080",
		"http://example.com":   "http://example.com",
		"about:blank":          "about:blank",
		"user@localhost:3000/": "http://user@localhost:3000/",
		"app.localhost":        "http://app.localhost",
	} {
		if got := cdp.NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseClipAndSize(t *testing.T) {
	c, err := cdp.ParseClip("1,2,3.5,4")
	if err != nil || *c != (cdp.Clip{X: 1, Y: 2, Width: 3.5, Height: 4}) {
		t.Fatalf("%v %v", c, err)
	}
	for _, bad := range []string{"1,2,3", "a,b,c,d", "0,0,0,10", "-1,0,5,5"} {
		if _, err := cdp.ParseClip(bad); err == nil {
			t.Errorf("ParseClip(%q) accepted", bad)
		}
	}
	if w, h, ok := browser.ParseSize("1280x900"); !ok || w != 1280 || h != 900 {
		t.Fatal("ParseSize")
	}
}

// TestTouchKeepsNewerCurrentTab: a page command that chose its tab from what it
// read (say, the first listed page, as the current tab was gone) must not
// override a current tab another dtb set meanwhile (an open's new tab).
func TestTouchKeepsNewerCurrentTab(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *Session {
		s, err := Open(ctx, Config{StateDir: dir, Session: "race"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	set := func(s *Session, id string) {
		if err := s.Update(ctx, func(st *State) error { st.CurrentTab = id; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	cmd, other := open(), open()
	set(cmd, "GONE")
	set(other, "NEW") // e.g. dtb open made its new tab current
	cmd.touchOver(ctx, "FIRST", true, "GONE")
	if got := open().State().CurrentTab; got != "NEW" {
		t.Fatalf("current tab %q, want the newer NEW", got)
	}
	// Unchanged (or forgotten) since it was read: the choice is pinned.
	set(other, "")
	cmd.touchOver(ctx, "FIRST", true, "GONE")
	if got := open().State().CurrentTab; got != "FIRST" {
		t.Fatalf("current tab %q, want FIRST", got)
	}
	cmd.touch(ctx, "SECOND", true)
	if got := open().State().CurrentTab; got != "SECOND" {
		t.Fatalf("current tab %q, want SECOND", got)
	}
}

// TestLockWaitIsBounded: work without a deadline of its own (what a command
// records after its --timeout) gives up on a session lock that another
// process holds and never releases (a stopped host) instead of hanging.
func TestLockWaitIsBounded(t *testing.T) {
	st, err := newStore(t.TempDir(), "held")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(st.lock), 0o700)
	holder := flock.New(st.lock)
	if ok, err := holder.TryLock(); !ok || err != nil {
		t.Fatalf("holding the lock: %v %v", ok, err)
	}
	defer holder.Unlock()
	start := time.Now()
	_, err = st.update(context.Background(), func(*State) error { return nil })
	if e := output.AsError(err); e == nil || e.Reason != "timeout" {
		t.Fatalf("update under a held lock: %v", err)
	}
	if took := time.Since(start); took < lockWaitMax || took > lockWaitMax+2*time.Second {
		t.Fatalf("gave up after %v, want about %v", took, lockWaitMax)
	}
}
