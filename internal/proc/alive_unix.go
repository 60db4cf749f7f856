//go:build unix

// Package proc answers whether a process runs. It imports nothing heavy: the
// dtb front (cmd/dtb) uses it.
package proc

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/dtb-cli/dtb/internal/rawfile"
)

// Alive reports whether pid runs (a zombie counts as gone).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	if b, err := rawfile.Read("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			return false
		}
	}
	return true
}
