package hostwire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A host that closes the connection before it takes the request (it was
// exiting as the CLI connected) did not run it: the client reaches the next
// host instead of falling back.
func TestClosedBeforeTakenReachesTheNextHost(t *testing.T) {
	dir, err := os.MkdirTemp("", "dtbw") // short: a unix socket path has a limit
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		first := true
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first { // the dying host
				first = false
				c.Close()
				continue
			}
			if _, _, err := ReadFrame(c); err == nil {
				WriteFrame(c, FrameStarted, nil)
				WriteFrame(c, FrameStdout, []byte("ran"))
				b, _ := json.Marshal(ExitMsg{Code: 3})
				WriteFrame(c, FrameExit, b)
			}
			c.Close()
		}
	}()
	client := &Client{Paths: Paths{Socket: sock}, Build: "b"}
	var out bytes.Buffer
	code, err := client.Run(context.Background(), &Request{Argv: []string{"dtb", "eval", "1"}}, &out, io.Discard)
	if err != nil || code != 3 || out.String() != "ran" {
		t.Fatalf("code %d, out %q, err %v: want the next host's answer", code, out.String(), err)
	}
}

// How a closing host shows before it took the request: the request write
// fails (EPIPE), or the first read does (reset, end of file). After it took
// the request (GoneError) nothing is retried: the command may have run.
func TestClosedOnUs(t *testing.T) {
	pathErr := func(errno syscall.Errno) error { return &os.PathError{Op: "write", Path: "h.sock", Err: errno} }
	cases := []struct {
		err  error
		want bool
	}{
		{&Unavailable{Why: "w", Err: pathErr(syscall.EPIPE)}, true},
		{&Unavailable{Why: "r", Err: pathErr(syscall.ECONNRESET)}, true},
		{&Unavailable{Why: "r", Err: io.EOF}, true},
		{&Unavailable{Why: "slow", Err: os.ErrDeadlineExceeded}, false},
		{&GoneError{Err: io.EOF}, false},
		{ErrNoHost, false},
	}
	for _, c := range cases {
		if got := closedOnUs(c.err); got != c.want {
			t.Errorf("closedOnUs(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
