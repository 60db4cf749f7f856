//go:build unix

package cdp

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// detach puts the browser in its own session and process group so that it
// outlives dtb and a Ctrl-C in dtb's terminal does not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// ProcessAlive reports whether pid runs (a zombie counts as gone).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// processIs reports whether pid is still the browser dtb started with this
// profile (guards against a recycled pid). Without /proc it trusts the pid.
func processIs(pid int, profile string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ProcessAlive(pid)
	}
	return profile == "" || strings.Contains(string(b), "--user-data-dir="+profile)
}

// killGroup signals the browser's whole process group (it leads its own).
func killGroup(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	syscall.Kill(-pid, sig)
	syscall.Kill(pid, sig)
}
