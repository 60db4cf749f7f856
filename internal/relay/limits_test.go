package relay

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// closedByServer waits until the server ends conn (EOF or reset), failing when it
// is still open after within.
func closedByServer(t *testing.T, conn net.Conn, within time.Duration) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(within))
	got, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection is still open after %v (read %q)", within, got)
	}
	return string(got)
}

// Issue 10.7: a connection cannot be held forever. Slow headers, a slow body and
// an idle keep-alive connection are each closed after their timeout, while a
// held check-in (longer than all three) still gets its command.
func TestConnectionTimeouts(t *testing.T) {
	rt := serveRelay(t, Options{LongPollMs: 2000, HeaderTimeout: 300 * time.Millisecond,
		BodyTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(rt.url, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("slow headers", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "GET /__dev-toolbar/state HTTP/1.1\r\nHost: %s\r\n", addr)
		closedByServer(t, c, 5*time.Second)
	})
	t.Run("slow body", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "POST /__dev-toolbar/state HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"results\":", addr)
		got := closedByServer(t, c, 5*time.Second)
		if got != "" && !strings.HasPrefix(got, "HTTP/1.1 400 ") {
			t.Errorf("answered %q", got)
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		c := dial()
		fmt.Fprintf(c, "GET /__dev-toolbar/state HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.Close {
			t.Fatal("the server closed the connection itself; nothing to test")
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
			t.Fatalf("idle connection: %q %v", rest, err)
		}
	})
	t.Run("held check-in outlives them", func(t *testing.T) {
		held := rt.async("POST", "/__dev-toolbar/state", body("tab-a", true, miniSnapshot))
		rt.waitHeld(1)
		time.Sleep(time.Second) // past every timeout above, within the hold
		cmd := rt.async("POST", "/__dev-toolbar/commands/flags.set", "")
		p := pending(t, recv(t, held, 2*time.Second))
		if len(p) != 1 {
			t.Fatalf("pending %v", p)
		}
		rt.checkIn(body("tab-a", true, "", result(tokenOf(p[0]), `{"ok":true}`)))
		if r := recv(t, cmd, 2*time.Second); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
}

// Issue 10.7: past the connection ceiling a new connection is refused with 503
// too-many-connections; when one closes, requests are served again.
func TestConnectionCeiling(t *testing.T) {
	rt := serveRelay(t, Options{MaxConns: 2})
	addr := strings.TrimPrefix(rt.url, "http://")
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	r := rt.do("GET", "/__dev-toolbar/state", "")
	for i := 0; r.status != 503 || r.str("reason") != "too-many-connections"; i++ {
		// The server may not have accepted the idle ones yet.
		if i > 100 {
			t.Fatalf("past the ceiling: %d %s", r.status, r.raw)
		}
		time.Sleep(20 * time.Millisecond)
		r = rt.do("GET", "/__dev-toolbar/state", "")
	}
	idle[0].Close()
	for i := 0; ; i++ {
		r = rt.do("GET", "/__dev-toolbar/state", "")
		if r.str("reason") == "no-page-connected" {
			break
		}
		if i > 100 {
			t.Fatalf("after a connection closed: %d %s", r.status, r.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
