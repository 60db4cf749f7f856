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

// wsConn is dtb's client websocket (RFC 6455) for the DevTools protocol:
// text messages, in one frame or several, no extensions. It is dtb's own
// (chromedp's transport takes no TLS settings and reads every message whole
// into memory) so that a wss:// service can be verified against a private CA
// (--cdp-ca) and a message over the caller's limit is read through and
// dropped, never held: a 200 MiB answer costs its first bytes, not 200 MiB
// and its copies.
type wsConn struct {
	nc  net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
	// mask is the masking key buffer of writes (a client masks every frame).
	mask [4]byte
}

// errTooBig is a message over the limit, read to its end and dropped.
var errTooBig = errors.New("websocket message over the limit")

// errNotText is a binary message: not CDP, skipped.
var errNotText = errors.New("binary websocket message")

// keptOfTooBig is how much of a dropped message is kept: enough for the id
// Chrome writes first ({"id":N,…}), so its caller learns why.
const keptOfTooBig = 256

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// dialWS opens a websocket to raw (ws:// or wss://) with header on the
// handshake; tlsConf (nil: the system's roots) verifies a wss:// server.
// The handshake is bounded by ctx.
func dialWS(ctx context.Context, raw string, header http.Header, tlsConf *tls.Config) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	switch u.Scheme {
	case "ws":
		if port == "" {
			port = "80"
		}
	case "wss":
		if port == "" {
			port = "443"
		}
	default:
		return nil, fmt.Errorf("websocket URL %s: scheme %q is not ws or wss", raw, u.Scheme)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, err
	}
	// The handshake ends with ctx: a server that accepts and never answers
	// does not hold the dial.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	if u.Scheme == "wss" {
		conf := &tls.Config{}
		if tlsConf != nil {
			conf = tlsConf.Clone()
		}
		if conf.ServerName == "" {
			conf.ServerName = u.Hostname()
		}
		tc := tls.Client(nc, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	var key [16]byte
	rand.Read(key[:])
	k := base64.StdEncoding.EncodeToString(key[:])
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Opaque: u.RequestURI()}, Host: u.Host, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	for name, vs := range header {
		if strings.EqualFold(name, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[http.CanonicalHeaderKey(name)] = append([]string(nil), vs...)
	}
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Key", k)
	req.Header.Set("Sec-WebSocket-Version", "13")
	if err := req.Write(nc); err != nil {
		nc.Close()
		return nil, ctxOr(ctx, err)
	}
	br := bufio.NewReaderSize(nc, 64<<10)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		nc.Close()
		return nil, ctxOr(ctx, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		nc.Close()
		return nil, &HandshakeError{Status: resp.StatusCode, err: fmt.Errorf("websocket handshake with %s: %s: %s", RedactURL(raw), resp.Status, strings.TrimSpace(string(body)))}
	}
	sum := sha1.Sum([]byte(k + wsGUID))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		nc.Close()
		return nil, fmt.Errorf("websocket handshake with %s: a wrong Sec-WebSocket-Accept", RedactURL(raw))
	}
	if !stop() {
		// ctx ended as the handshake completed: the deadline it set stays.
		nc.Close()
		return nil, ctx.Err()
	}
	nc.SetDeadline(time.Time{})
	return &wsConn{nc: nc, br: br}, nil
}

// ctxOr is ctx's error when ctx ended (the deadline cut the handshake), else err.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// RedactURL hides the values of a URL's query (a service's token) for
// messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw
	}
	q := u.Query()
	for k := range q {
		q.Set(k, "…")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// readMessage reads the next text message. With limit() > 0 (read when the
// message's first frame arrives: the reader waits for it long before a
// caller sets the limit for the answer it expects), a message over it is
// read through without being kept: errTooBig, its size and its first
// keptOfTooBig bytes. Pings are answered, pongs dropped; a close frame is
// answered and ends the connection (io.EOF).
func (w *wsConn) readMessage(limit func() int64) ([]byte, int64, error) {
	var msg []byte
	var size, max int64
	first := byte(0)
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return nil, 0, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		masked, n := h[1]&0x80 != 0, int64(h[1]&0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return nil, 0, err
			}
			n = int64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return nil, 0, err
			}
			n = int64(binary.BigEndian.Uint64(b[:]))
			if n < 0 {
				return nil, 0, errors.New("websocket frame length out of range")
			}
		}
		var mask [4]byte
		if masked {
			if _, err := io.ReadFull(w.br, mask[:]); err != nil {
				return nil, 0, err
			}
		}
		if op >= 0x8 { // control frames: at most 125 bytes, never fragmented
			if n > 125 {
				return nil, 0, errors.New("websocket control frame over 125 bytes")
			}
			payload := make([]byte, n)
			if _, err := io.ReadFull(w.br, payload); err != nil {
				return nil, 0, err
			}
			switch op {
			case 0x8:
				w.writeFrame(0x8, payload[:min(len(payload), 2)])
				return nil, 0, io.EOF
			case 0x9:
				if err := w.writeFrame(0xA, payload); err != nil {
					return nil, 0, err
				}
			}
			continue
		}
		if op != 0 {
			first = op
			max = limit()
		}
		start := int64(len(msg))
		size += n
		if max > 0 && size > max {
			// Over the limit: keep the head (the id), read the rest through.
			keep := max64(0, min(n, keptOfTooBig-start))
			if keep > 0 {
				msg = append(msg, make([]byte, keep)...)
				if _, err := io.ReadFull(w.br, msg[start:]); err != nil {
					return nil, 0, err
				}
				unmask(msg[start:], mask, masked, 0)
			}
			if _, err := io.CopyN(io.Discard, w.br, n-keep); err != nil {
				return nil, 0, err
			}
		} else {
			msg = append(msg, make([]byte, n)...)
			if _, err := io.ReadFull(w.br, msg[start:]); err != nil {
				return nil, 0, err
			}
			unmask(msg[start:], mask, masked, 0)
		}
		if !fin {
			continue
		}
		switch {
		case first != 0x1:
			return nil, size, errNotText
		case max > 0 && size > max:
			return msg, size, errTooBig
		}
		return msg, size, nil
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// unmask applies a frame's masking key (servers do not mask; tolerated).
func unmask(b []byte, mask [4]byte, masked bool, pos int) {
	if !masked {
		return
	}
	for i := range b {
		b[i] ^= mask[(pos+i)&3]
	}
}

// writeText writes one text message as a single frame (Chrome takes no
// fragmented messages).
func (w *wsConn) writeText(b []byte) error { return w.writeFrame(0x1, b) }

// writeFrame writes one masked frame with opcode op.
func (w *wsConn) writeFrame(op byte, payload []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	hdr := make([]byte, 0, 14)
	hdr = append(hdr, 0x80|op)
	n := len(payload)
	switch {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n <= 0xffff:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	rand.Read(w.mask[:])
	hdr = append(hdr, w.mask[:]...)
	masked := make([]byte, len(hdr)+n)
	copy(masked, hdr)
	body := masked[len(hdr):]
	for i, c := range payload {
		body[i] = c ^ w.mask[i&3]
	}
	_, err := w.nc.Write(masked)
	return err
}

// close sends a close frame and closes the connection (Chrome drops the TCP
// connection on a close frame; the reader sees the end).
func (w *wsConn) close() error {
	w.nc.SetWriteDeadline(time.Now().Add(time.Second))
	w.writeFrame(0x8, []byte{0x03, 0xe8}) // 1000: normal closure
	return w.nc.Close()
}
