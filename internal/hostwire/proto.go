// Package host is the session host: one long-lived dtb process per session
// that runs the browser commands of short-lived dtb processes and stays
// connected to the browser and its tabs between them (so a command costs no
// dial, and a dialog a command left open is still there for the next one).
//
// The CLI side (Client) forwards a command line, the environment that
// matters and whether its streams are terminals over a unix socket in the
// session's state folder (mode 0600, peer checked to be the same user); the
// host runs the same command code with per-request streams and environment
// and streams back stdout, stderr and the exit code. A host that is missing,
// dead, hung, refusing or of another build never fails a command: the CLI
// attaches directly instead.
package hostwire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// Frame types. Client → host: request, cancel, quit. Host → client: started,
// stdout, stderr, exit, other build.
const (
	FrameRequest  = 'R'
	FrameCancel   = 'C'
	FrameQuit     = 'Q'
	FrameStarted  = 'S'
	FrameStdout   = 'O'
	FrameStderr   = 'E'
	FrameExit     = 'X'
	FrameMismatch = 'V'
	// FrameWithdraw: the CLI gave up waiting for 'S' and will attach
	// directly unless the host has started; FrameWithdrawn: the host has
	// not, and will not, run the request.
	FrameWithdraw  = 'W'
	FrameWithdrawn = 'N'
)

const MaxFrame = 64 << 20

// Request is one command line for the host to run.
type Request struct {
	Build  string            `json:"build"`
	Argv   []string          `json:"argv"` // argv[0] is the program name
	Env    map[string]string `json:"env"`  // DTB_* and NO_COLOR of the CLI
	Cwd    string            `json:"cwd"`
	OutTTY bool              `json:"outTTY"`
	ErrTTY bool              `json:"errTTY"`
}

// Getenv is the request's environment lookup.
func (r *Request) Getenv(k string) string { return r.Env[k] }

type ExitMsg struct {
	Code int `json:"code"`
}

type MismatchMsg struct {
	Build string `json:"build"`
	PID   int    `json:"pid"`
}

func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	hdr := make([]byte, 5, 5+len(payload))
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	_, err := w.Write(append(hdr, payload...))
	return err
}

func WriteJSON(w io.Writer, typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteFrame(w, typ, b)
}

func ReadFrame(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("host: frame of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, err
	}
	return hdr[0], b, nil
}
