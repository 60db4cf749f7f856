//go:build unix

package browser

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/dtb-cli/dtb/internal/proc"
)

// detach puts the browser in its own session and process group so that it
// outlives dtb and a Ctrl-C in dtb's terminal does not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// processIs reports whether pid is still the browser dtb started with this
// profile (guards against a recycled pid). Without /proc it trusts the pid.
func processIs(pid int, profile string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return proc.Alive(pid)
	}
	return profile == "" || strings.Contains(string(b), "--user-data-dir="+profile)
}

// KillGroup signals the browser's whole process group (it leads its own).
func KillGroup(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	syscall.Kill(-pid, sig)
	syscall.Kill(pid, sig)
}

// browserProcs lists the running processes of a browser dtb launched with
// profile in process group group: every process whose command line names the
// profile, and the members of the group while one of those still does, or
// that are themselves Chromium helpers (--type=…, which need not name the
// profile), so a recycled group id is never taken for the browser's. ok is
// false without /proc (then only the group can be signalled).
func browserProcs(group int, profile string) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	flag := []byte("--user-data-dir=" + profile)
	var members []int
	named := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:]) // state ppid pgrp …
		pgrp := 0
		if len(f) > 2 {
			pgrp, _ = strconv.Atoi(f[2])
		}
		if s[i+2] == 'Z' {
			// A zombie leader whose other threads still run (a utility
			// process flushing its disk cache as it exits) still writes to
			// the profile: it counts until its last thread ends.
			if group > 0 && pgrp == group && liveThreads(e.Name()) {
				pids = append(pids, pid)
			}
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if profile != "" && namesArg(cmd, flag) {
			pids = append(pids, pid)
			if pgrp == group {
				named = true
			}
			continue
		}
		if group > 0 && pgrp == group {
			if hasArgPrefix(cmd, []byte("--type=")) {
				pids = append(pids, pid)
			} else {
				members = append(members, pid)
			}
		}
	}
	if named {
		pids = append(pids, members...)
	}
	return pids, true
}

// liveThreads reports whether process pid has a thread besides its leader.
func liveThreads(pid string) bool {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	return err == nil && len(tasks) > 1
}

// namesArg reports whether the NUL-separated command line has the argument arg.
func namesArg(cmdline, arg []byte) bool {
	for _, a := range bytes.Split(cmdline, []byte{0}) {
		if bytes.Equal(a, arg) {
			return true
		}
	}
	return false
}

// hasArgPrefix reports whether an argument of the command line starts with
// prefix. Chromium rewrites its helpers' titles (setproctitle) into one
// space-separated string, so arguments are split at spaces as well as NULs:
// missing --type= there left a killed browser's network service running and
// writing into a profile dtb had just removed.
func hasArgPrefix(cmdline, prefix []byte) bool {
	for _, a := range bytes.FieldsFunc(cmdline, func(r rune) bool { return r == 0 || r == ' ' }) {
		if bytes.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// signalProcs sends sig to each pid.
func signalProcs(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		syscall.Kill(pid, sig)
	}
}
