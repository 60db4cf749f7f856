package relay

import (
	"bytes"
	"net"
	"net/url"
	"strings"
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
