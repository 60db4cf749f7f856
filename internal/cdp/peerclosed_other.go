//go:build !unix

package cdp

// peerClosed cannot peek at the socket here: the read loop finds out.
func (w *wsConn) peerClosed() bool { return false }
