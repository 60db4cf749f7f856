// Package sessiontest is the test harness the packages above internal/session share:
// a dtb session attached to a test browser, and tabs opened and connected as
// dtb commands do.
package sessiontest

import (
	"context"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/session"
)

// Context is a test's context: 60 s, cancelled when the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Session is a dtb session with its own state directory, attached to the
// browser at endpoint; the tabs it opens are closed at the end of the test.
func Session(t testing.TB, endpoint string) *session.Session {
	t.Helper()
	s, err := session.Open(context.Background(), session.Config{StateDir: t.TempDir(), CDP: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for id := range s.State().Tabs {
			s.CloseTab(ctx, id)
		}
		s.Close()
	})
	return s
}

// OpenTab opens url in a new tab of s as `dtb open` does (waiting for load)
// and then connects to the tab anew, as a later dtb command does.
func OpenTab(t testing.TB, s *session.Session, url string) *cdp.Page {
	t.Helper()
	res, err := s.OpenURL(Context(t), session.OpenOptions{URL: url, Wait: cdp.WaitLoad})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return Connect(t, s, res.Tab.ID)
}

// Connect is a new connection to tab id, as each dtb command makes; it is
// closed at the end of the test.
func Connect(t testing.TB, s *session.Session, id string) *cdp.Page {
	t.Helper()
	p, err := s.Page(Context(t), session.TabSelector{Tab: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
