//go:build !unix

package browser

import (
	"os"
	"os/exec"
	"syscall"
)

func detach(cmd *exec.Cmd) {}

// ProcessAlive reports whether pid runs.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

func processIs(pid int, profile string) bool { return ProcessAlive(pid) }

func KillGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

func browserProcs(group int, profile string) ([]int, bool) { return nil, false }

func signalProcs(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}
