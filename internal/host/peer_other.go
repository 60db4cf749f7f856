//go:build !linux

package host

import (
	"net"
	"path/filepath"
)

// samePeer: elsewhere the socket's mode (0600) is the check.
func samePeer(c *net.UnixConn) bool { return true }

func filepathDir(p string) string { return filepath.Dir(p) }
