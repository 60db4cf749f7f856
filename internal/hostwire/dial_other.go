//go:build !unix

package hostwire

import (
	"net"
	"time"
)

// Conn is a connection to a host's socket.
type Conn interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
	Close() error
	SetDeadline(time.Time) error
}

// Dial connects to the unix socket at path within wait.
func Dial(path string, wait time.Duration) (Conn, error) {
	d := net.Dialer{Timeout: wait}
	return d.Dial("unix", path)
}
