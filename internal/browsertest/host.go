package browsertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// HostPIDs are the session hosts running for the state directory, from their
// info files (sessions/<name>.host.json).
func HostPIDs(stateDir string) []int {
	files, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*.host.json"))
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var in struct{ PID int }
		if json.Unmarshal(b, &in) == nil && in.PID > 0 && Alive(in.PID) {
			pids = append(pids, in.PID)
		}
	}
	return pids
}

// StopHosts ends, by PID, every session host of the state directory: a test
// that ran browser commands started one, and its idle limit is far away.
func StopHosts(stateDir string) {
	pids := HostPIDs(stateDir)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
