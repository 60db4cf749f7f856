package host

import (
	"encoding/json"
	"os"
	"time"

	"github.com/dtb-cli/dtb/internal/hostwire"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/proc"
)

// Paths are a session's host files (hostwire.Paths).
type Paths = hostwire.Paths

// PathsFor is hostwire.PathsFor.
func PathsFor(stateDir, name string) (Paths, error) { return hostwire.PathsFor(stateDir, name) }

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
	if json.Unmarshal(b, &in) != nil || in.PID <= 0 || !proc.Alive(in.PID) {
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
