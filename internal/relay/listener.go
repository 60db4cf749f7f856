package relay

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// net/http answers a request line whose path has malformed percent-encoding
// (POST /__dev-toolbar/commands/%E0%A4%A) with its own text/plain 400 before any
// handler runs, where the spec wants the JSON 400 bad-command-id. So the relay's
// listener repairs such a first request line of a connection — only a line net/http
// would refuse, nothing else is touched — and passes the original target along in a
// header carrying a per-process secret, which no client can forge.
//
// Only the first request of a connection is repaired (finding later request lines
// would mean parsing HTTP framing); curl and dtb send one request per connection.

const rawTargetHeader = "Dtb-Relay-Raw-Target"

// maxRequestLine bounds what is buffered while looking for the first line.
const maxRequestLine = 16 << 10

type rawTargetListener struct {
	net.Listener
	secret string
}

func (l rawTargetListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &rawTargetConn{Conn: c, secret: l.secret}, nil
}

type rawTargetConn struct {
	net.Conn
	secret  string
	started bool
	buf     []byte // the (possibly repaired) first line, not yet read
	err     error  // a read error met while buffering, returned after buf
}

func (c *rawTargetConn) Read(p []byte) (int, error) {
	if !c.started {
		c.started = true
		c.fill()
	}
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	if c.err != nil {
		err := c.err
		c.err = nil
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *rawTargetConn) fill() {
	chunk := make([]byte, 4096)
	for len(c.buf) < maxRequestLine && bytes.IndexByte(c.buf, '\n') < 0 {
		n, err := c.Conn.Read(chunk)
		c.buf = append(c.buf, chunk[:n]...)
		if err != nil {
			c.err = err
			return
		}
	}
	c.buf = repairRequestLine(c.buf, c.secret)
}

// CloseWrite keeps net/http's half-close before closing a connection, which is what
// lets a client read an answer sent before its body was fully read.
func (c *rawTargetConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// repairRequestLine rewrites "METHOD target VERSION" when net/http would refuse the
// target and escaping its stray "%" makes it acceptable.
func repairRequestLine(buf []byte, secret string) []byte {
	end := bytes.IndexByte(buf, '\n')
	if end < 0 {
		return buf
	}
	line := strings.TrimSuffix(string(buf[:end]), "\r")
	method, rest, ok1 := strings.Cut(line, " ")
	target, version, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !strings.HasPrefix(target, "/") {
		return buf
	}
	if _, err := url.ParseRequestURI(target); err == nil {
		return buf
	}
	fixed := escapeStrayPercents(target)
	if _, err := url.ParseRequestURI(fixed); err != nil {
		return buf
	}
	out := method + " " + fixed + " " + version + "\r\n" + rawTargetHeader + ": " + secret + " " + target + "\r\n"
	return append([]byte(out), buf[end+1:]...)
}

func escapeStrayPercents(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// limitListener keeps at most max connections open. A connection past the
// ceiling is not served as usual: up to reserve more are kept for the relay's own
// routes (the page's check-ins and its callers), so a flood of connections to the
// app's files cannot cut the page off. Such a connection's request headers are read
// first (briefly): a request under base is served, on a connection closed after
// it (Connection: close); anything else, or one past the reserve too, is answered
// 503 too-many-connections (after its request headers, so the client reads the
// answer instead of a reset) and closed.
type limitListener struct {
	net.Listener
	max, reserve int
	base         string
	open         atomic.Int64
	reserved     atomic.Int64
	logf         func(format string, args ...any)

	start sync.Once
	conns chan net.Conn
	err   chan error
}

func newLimitListener(ln net.Listener, ceiling int, base string, logf func(string, ...any)) *limitListener {
	return &limitListener{Listener: ln, max: ceiling, reserve: max(1, ceiling/8), base: base, logf: logf,
		conns: make(chan net.Conn), err: make(chan error, 1)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.start.Do(func() { go l.accept() })
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.err:
		l.err <- err // every later Accept fails the same way
		return nil, err
	}
}

func (l *limitListener) accept() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.err <- err
			return
		}
		if l.open.Add(1) <= int64(l.max) {
			if !l.deliver(&limitConn{Conn: c, release: func() { l.open.Add(-1) }}) {
				return
			}
			continue
		}
		l.open.Add(-1)
		if l.reserved.Add(1) > int64(l.reserve) {
			l.reserved.Add(-1)
			l.logf("relay: refused a connection from %s: %d connections are open (the ceiling)", c.RemoteAddr(), l.max)
			go refuseConn(c, l.max, nil)
			continue
		}
		go l.screen(c)
	}
}

// deliver hands c to Accept; false when the listener is closed meanwhile.
func (l *limitListener) deliver(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case err := <-l.err:
		l.err <- err
		c.Close()
		return false
	}
}

// screen reads the first request's headers of a connection past the ceiling and
// serves it only when it is for the relay's routes.
func (l *limitListener) screen(c net.Conn) {
	release := func() { l.reserved.Add(-1) }
	head := readHead(c)
	if !l.forBase(head) {
		l.logf("relay: refused a connection from %s: %d connections are open (the ceiling; room is kept for %s only)", c.RemoteAddr(), l.max, l.base)
		release() // refused: it no longer takes the room kept
		refuseConn(c, l.max, head)
		return
	}
	_ = c.SetDeadline(time.Time{})
	l.deliver(&limitConn{Conn: c, release: release, pre: head, reserve: true})
}

func (l *limitListener) forBase(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	_, rest, _ := strings.Cut(string(line), " ")
	target, _, _ := strings.Cut(rest, " ")
	path, _, _ := strings.Cut(target, "?")
	return path == l.base || strings.HasPrefix(path, l.base+"/")
}

type limitConn struct {
	net.Conn
	release func()
	once    sync.Once
	pre     []byte // bytes read while screening it, not yet read by the server
	reserve bool   // past the ceiling: served once, for the relay's routes
}

func (c *limitConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *limitConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// reserveConn reports whether c (as the server sees it) is a connection served
// past the ceiling.
func reserveConn(c net.Conn) bool {
	if rc, ok := c.(*rawTargetConn); ok {
		c = rc.Conn
	}
	lc, ok := c.(*limitConn)
	return ok && lc.reserve
}

// readHead reads a request's headers (briefly, at most maxRequestLine bytes).
func readHead(c net.Conn) []byte {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 4096)
	for len(buf) < maxRequestLine && !bytes.Contains(buf, []byte("\r\n\r\n")) {
		n, err := c.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			break
		}
	}
	return buf
}

// refuseConn reads the request headers (briefly) unless head has them, answers
// 503 and closes.
func refuseConn(c net.Conn, max int, head []byte) {
	defer c.Close()
	if head == nil {
		readHead(c)
	}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b := render(object{
		{"ok", false},
		{"reason", "too-many-connections"},
		{"message", fmt.Sprintf("The relay has %d connections open, its ceiling (--max-conns): this one was refused. Retry, or close idle connections.", max)},
	})
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 1<<20))
}
