//go:build !unix

package browser

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/dtb-cli/dtb/internal/proc"
)

func detach(cmd *exec.Cmd) {}

func processIs(pid int, profile string) bool { return proc.Alive(pid) }

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
