package hostwire

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/dtb-cli/dtb/internal/proc"
	"github.com/dtb-cli/dtb/internal/userdirs"
)

// Paths are a session's host files, next to its state file.
type Paths struct {
	Socket string // the unix socket
	Info   string // the running host's info (internal/host.Info)
	Lock   string // held while a CLI starts a host
	Log    string // the host's stderr
}

// PathsFor is the host files of session in the state directory (""
// for userdirs.StateDir()).
func PathsFor(stateDir, name string) (Paths, error) {
	if stateDir == "" {
		d, err := userdirs.StateDir()
		if err != nil {
			return Paths{}, err
		}
		stateDir = d
	}
	base := filepath.Join(stateDir, "sessions", name+".host")
	return Paths{Socket: base + ".sock", Info: base + ".json", Lock: base + ".lock", Log: base + ".log"}, nil
}

// runningPID is the pid of the session's host from its info file, 0 when
// there is none or its process is gone.
func runningPID(p Paths) int {
	b, err := os.ReadFile(p.Info)
	if err != nil {
		return 0
	}
	var in struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &in) != nil || in.PID <= 0 || !proc.Alive(in.PID) {
		return 0
	}
	return in.PID
}
