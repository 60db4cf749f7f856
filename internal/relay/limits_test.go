package relay

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
// too-many-connections; when one closes, requests are served again. Issue 22.6:
// room is kept past the ceiling for the relay's own routes (the page's check-ins
// and its callers), so a flood of connections to the app cannot cut the page off;
// past that room too, everything is refused.
func TestConnectionCeiling(t *testing.T) {
	rt := serveRelay(t, Options{MaxConns: 2})
	addr := strings.TrimPrefix(rt.url, "http://")
	ll := rt.s.ln.(rawTargetListener).Listener.(*limitListener)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	idle := []net.Conn{dial(), dial()}
	for i := 0; ll.open.Load() < 2; i++ {
		if i > 100 {
			t.Fatalf("the server did not accept the idle connections")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := rt.do("GET", "/index.html", "")
	expectReason(t, r, 503, "too-many-connections")
	r = rt.do("POST", "/__dev-toolbar/state", body("tab-a", true, ""))
	if r.status != 200 {
		t.Fatalf("a check-in past the ceiling: %d %v %s", r.status, r.header, r.raw)
	}
	// The check-in's connection gives the room kept back once the server has
	// closed it, which can come after the client read the answer: a connection
	// that arrives before that is refused, not screened.
	for i := 0; ll.reserved.Load() != 0; i++ {
		if i > 100 {
			t.Fatalf("the check-in's connection still holds the room kept")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The room kept is taken (a connection that has not sent its request yet).
	dial()
	for i := 0; ll.reserved.Load() < 1; i++ {
		if i > 100 {
			t.Fatalf("the third connection was not screened")
		}
		time.Sleep(20 * time.Millisecond)
	}
	expectReason(t, rt.do("GET", "/__dev-toolbar/state", ""), 503, "too-many-connections")
	idle[0].Close()
	for i := 0; ; i++ {
		r = rt.do("GET", "/index.html", "")
		if r.status == 200 {
			break
		}
		if i > 100 {
			t.Fatalf("after a connection closed: %d %s", r.status, r.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 22.6: a client that stops reading an answer loses its connection after
// the write timeout, instead of holding it (and a connection slot) for as long as
// it likes.
func TestStalledReaderIsCutOff(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 32<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := serveRelay(t, Options{Static: dir, WriteTimeout: 300 * time.Millisecond})
	ll := rt.s.ln.(rawTargetListener).Listener.(*limitListener)
	c, err := net.Dial("tcp", strings.TrimPrefix(rt.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	// Read nothing: the server's write stalls on full socket buffers.
	deadline := time.Now().Add(10 * time.Second)
	for ll.open.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a stalled reader still holds its connection after 10 s (write timeout 300 ms)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
