//go:build !unix

// Package proc answers whether a process runs.
package proc

import (
	"os"
	"syscall"
)

// Alive reports whether pid runs.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
