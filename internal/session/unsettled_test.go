package session

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// blackHole accepts connections and never answers; closed when the test ends.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// A navigation to a server that never answers ends at the deadline with the
// load stopped, and the tab answers the next command at once; a tab that a
// page's own navigation left waiting is found so and freed (issue 23.5).
func TestNavigationToABlackHole(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("tall.html"), cdp.WaitLoad)
	hole := blackHole(t)
	short, cancel := context.WithTimeout(ctx, time.Second)
	_, err := p.Navigate(short, hole, cdp.WaitLoad)
	cancel()
	if reason(err) != "timeout" || !stopped(err) {
		t.Fatalf("navigate to a black hole: %v, want timeout with stopped", err)
	}
	next, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	raw, err := p.Evaluate(next, "location.pathname", false)
	if err != nil || string(raw) != `"/tall.html"` {
		t.Fatalf("after the stopped load: %s %v, want the page it was on", raw, err)
	}

	// The page navigates itself into the black hole: commands are held.
	if _, err := p.Evaluate(next, "setTimeout(() => { location.href = "+quoteJS(hole+"page")+"; }, 0), 1", false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	probe, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = p.Evaluate(probe, "1", false)
	cancel2()
	if err == nil {
		t.Skip("this browser does not hold commands during a pending navigation")
	}
	if !p.UnstuckByStop(ctx, 2*time.Second) {
		t.Fatal("the tab still does not answer once its pending load is stopped")
	}
}

// A screenshot of a page that navigates every 30 ms is taken of whatever is
// there, or fails page-navigating: never a hang to the deadline, never a
// protocol error (issue 23.5).
func TestScreenshotOfARestlessPage(t *testing.T) {
	s := attached(t)
	ctx := tctx(t)
	p, _ := openPage(t, s, ctx, fixture("restless.html"), cdp.WaitNone)
	taken := 0
	for i := 0; i < 8; i++ {
		sctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		shot, err := p.Screenshot(sctx, cdp.ScreenshotOptions{})
		cancel()
		switch {
		case err == nil && shot.Width > 0:
			taken++
		case reason(err) == "page-navigating":
		default:
			t.Fatalf("screenshot %d of a restless page: %v", i, err)
		}
	}
	if taken == 0 {
		t.Fatal("no screenshot of the restless page was taken")
	}
}

func stopped(err error) bool {
	var e *output.Error
	return errors.As(err, &e) && e.Details["stopped"] == true
}

func quoteJS(s string) string { b, _ := json.Marshal(s); return string(b) }

// openPage opens url in a new tab of s and attaches to it (the connection
// closes when the test ends); it returns the page and the tab's id.
func openPage(t *testing.T, s *Session, ctx context.Context, url string, wait cdp.WaitMode) (*cdp.Page, string) {
	t.Helper()
	res, err := s.OpenURL(ctx, OpenOptions{URL: url, Wait: wait})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	p, err := s.Page(ctx, TabSelector{Tab: res.Tab.ID})
	if err != nil {
		t.Fatalf("attach to %s: %v", res.Tab.ID, err)
	}
	t.Cleanup(func() { p.Close() })
	return p, res.Tab.ID
}
