package host

import (
	"encoding/json"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"os"
	"path/filepath"
	"time"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/session"
)

// Paths are a session's host files, next to its state file.
type Paths struct {
	Socket string // the unix socket
	Info   string // Info of the running host
	Lock   string // held while a CLI starts a host
	Log    string // the host's stderr
}

// PathsFor is the host files of session in the state directory (""
// for session.StateDir()).
func PathsFor(stateDir, name string) (Paths, error) {
	if stateDir == "" {
		d, err := session.StateDir()
		if err != nil {
			return Paths{}, err
		}
		stateDir = d
	}
	base := filepath.Join(stateDir, "sessions", name+".host")
	return Paths{Socket: base + ".sock", Info: base + ".json", Lock: base + ".lock", Log: base + ".log"}, nil
}

// Info is what a running host says of itself (dtb status shows it).
type Info struct {
	PID       int       `json:"pid"`
	Since     time.Time `json:"since"`
	IdleLimit string    `json:"idleLimit"`
	Build     string    `json:"build"`
	Socket    string    `json:"socket"`
	// Routes are the host's request routes (dtb route), newest first.
	Routes []pagedata.Route `json:"routes,omitempty"`
}

// ReadInfo reads the host's info file; nil when there is none or its
// process is gone.
func ReadInfo(p Paths) *Info {
	b, err := os.ReadFile(p.Info)
	if err != nil {
		return nil
	}
	var in Info
	if json.Unmarshal(b, &in) != nil || in.PID <= 0 || !browser.ProcessAlive(in.PID) {
		return nil
	}
	return &in
}

func writeInfo(p Paths, in Info) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	tmp := p.Info + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.Info)
}
