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
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
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

// AppendJSON appends the request as JSON, what json.Marshal would write
// (without its HTML escapes). The front encodes its one request by hand:
// encoding/json's first use of a type builds its encoder by reflection, which
// took 0.5–1.5 ms of a hosted eval's front here.
func (r *Request) AppendJSON(b []byte) []byte {
	b = append(b, `{"build":`...)
	b = appendJSONString(b, r.Build)
	b = append(b, `,"argv":`...)
	if r.Argv == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range r.Argv {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, a)
		}
		b = append(b, ']')
	}
	b = append(b, `,"env":`...)
	if r.Env == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		first := true
		for k, v := range r.Env {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, v)
		}
		b = append(b, '}')
	}
	b = append(b, `,"cwd":`...)
	b = appendJSONString(b, r.Cwd)
	b = append(b, `,"outTTY":`...)
	b = strconv.AppendBool(b, r.OutTTY)
	b = append(b, `,"errTTY":`...)
	b = strconv.AppendBool(b, r.ErrTTY)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: invalid UTF-8 becomes U+FFFD,
// as with encoding/json.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// Getenv is the request's environment lookup.
func (r *Request) Getenv(k string) string { return r.Env[k] }

type ExitMsg struct {
	Code int `json:"code"`
}

// ParseExit reads an exit frame's body. The host writes it with
// encoding/json ({"code":N}); the front reads that form by hand, since
// encoding/json's first decode in a process builds its decoder by
// reflection (0.18 ms here, on every command), and any other form through
// encoding/json.
func ParseExit(b []byte) (int, error) {
	if digits, ok := bytes.CutPrefix(b, []byte(`{"code":`)); ok {
		if digits, ok = bytes.CutSuffix(digits, []byte("}")); ok {
			if n, err := strconv.Atoi(string(digits)); err == nil {
				return n, nil
			}
		}
	}
	var x ExitMsg
	if err := json.Unmarshal(b, &x); err != nil {
		return 0, err
	}
	return x.Code, nil
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
