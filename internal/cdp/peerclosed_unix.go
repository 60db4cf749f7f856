//go:build unix

package cdp

import (
	"crypto/tls"
	"syscall"
)

// peerClosed reports whether the websocket's peer has already closed or reset
// the TCP connection, without a round trip: a peek at the socket (the read
// loop may not have seen the end yet). A killed browser's connections end
// this way; a pooled one must not be handed to the next command.
func (w *wsConn) peerClosed() bool {
	nc := w.nc
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	// Control, not Read: the read loop holds the socket's read lock.
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (n == 0 && err == nil) || (err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR)
	})
	return err != nil || closed
}
