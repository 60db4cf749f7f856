//go:build !unix

package hostwire

import (
	"net"
	"time"
)

// Dial connects to the unix socket at path within wait.
func Dial(path string, wait time.Duration) (Conn, error) {
	d := net.Dialer{Timeout: wait}
	return d.Dial("unix", path)
}
