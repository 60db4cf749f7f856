package cdp

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// maxMessage bounds one incoming websocket message (a full-page screenshot is one
// base64 message).
const maxMessage = 512 << 20

// wsConn is a minimal RFC 6455 client: text frames out (masked, unfragmented, as
// Chrome wants), text/continuation frames in, ping answered, close honoured. It
// is all dtb needs to talk CDP and costs nothing to set up.
type wsConn struct {
	nc   net.Conn
	br   *bufio.Reader
	wmu  sync.Mutex
	wbuf []byte
}

// HandshakeError is a websocket upgrade the server refused; Status is its HTTP
// status (Chrome answers 404/500 for an unknown target).
type HandshakeError struct {
	Status int
	Body   string
}

func (e *HandshakeError) Error() string {
	msg := fmt.Sprintf("websocket handshake refused: HTTP %d", e.Status)
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + b
	}
	return msg
}

// dialWS opens a ws:// or wss:// URL with extra handshake headers.
func dialWS(ctx context.Context, rawURL string, header http.Header) (*wsConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	secure := false
	switch u.Scheme {
	case "ws":
	case "wss":
		secure = true
	default:
		return nil, fmt.Errorf("not a websocket URL: %q", rawURL)
	}
	host := u.Host
	if u.Port() == "" {
		if secure {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	if secure {
		tc := tls.Client(nc, &tls.Config{ServerName: u.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	var kb [16]byte
	rand.Read(kb[:])
	key := base64.StdEncoding.EncodeToString(kb[:])
	path := u.RequestURI()
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", path, u.Host, key)
	if u.User != nil && header.Get("Authorization") == "" {
		pw, _ := u.User.Password()
		fmt.Fprintf(&b, "Authorization: Basic %s\r\n", base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(nc, b.String()); err != nil {
		nc.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(nc, 64<<10)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		nc.Close()
		return nil, &HandshakeError{Status: resp.StatusCode, Body: string(body)}
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		nc.Close()
		return nil, errors.New("websocket handshake: bad Sec-WebSocket-Accept")
	}
	nc.SetDeadline(time.Time{})
	return &wsConn{nc: nc, br: br}, nil
}

// writeText sends one masked text frame.
func (c *wsConn) writeText(p []byte) error { return c.writeFrame(0x1, p) }

func (c *wsConn) writeFrame(op byte, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := len(p)
	buf := c.wbuf[:0]
	buf = append(buf, 0x80|op)
	switch {
	case n < 126:
		buf = append(buf, 0x80|byte(n))
	case n <= 0xFFFF:
		buf = append(buf, 0x80|126, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0x80|127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	buf = append(buf, mask[:]...)
	start := len(buf)
	buf = append(buf, p...)
	for i := range n {
		buf[start+i] ^= mask[i&3]
	}
	_, err := c.nc.Write(buf)
	if cap(buf) <= 1<<20 {
		c.wbuf = buf[:0]
	}
	return err
}

// readMessage returns the next complete text or binary message.
func (c *wsConn) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.br, h[:]); err != nil {
			return nil, err
		}
		fin := h[0]&0x80 != 0
		op := h[0] & 0x0F
		masked := h[1]&0x80 != 0
		n := uint64(h[1] & 0x7F)
		switch n {
		case 126:
			var e [2]byte
			if _, err := io.ReadFull(c.br, e[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err := io.ReadFull(c.br, e[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(e[:])
		}
		var mask [4]byte
		if masked {
			if _, err := io.ReadFull(c.br, mask[:]); err != nil {
				return nil, err
			}
		}
		if n > maxMessage || uint64(len(msg))+n > maxMessage {
			return nil, fmt.Errorf("websocket message larger than %d bytes", maxMessage)
		}
		start := len(msg)
		if op >= 0x8 { // control frame: read separately
			payload := make([]byte, n)
			if _, err := io.ReadFull(c.br, payload); err != nil {
				return nil, err
			}
			if masked {
				for i := range payload {
					payload[i] ^= mask[i&3]
				}
			}
			switch op {
			case 0x8:
				c.writeFrame(0x8, nil)
				return nil, io.EOF
			case 0x9:
				c.writeFrame(0xA, payload)
			}
			continue
		}
		if cap(msg)-len(msg) < int(n) {
			grown := make([]byte, len(msg), len(msg)+int(n))
			copy(grown, msg)
			msg = grown
		}
		msg = msg[:start+int(n)]
		if _, err := io.ReadFull(c.br, msg[start:]); err != nil {
			return nil, err
		}
		if masked {
			for i := start; i < len(msg); i++ {
				msg[i] ^= mask[(i-start)&3]
			}
		}
		if fin {
			return msg, nil
		}
	}
}

func (c *wsConn) close() error {
	c.writeFrame(0x8, []byte{0x03, 0xE8}) // 1000 normal closure
	return c.nc.Close()
}
