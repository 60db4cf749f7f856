package host

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/hostwire"
)

// A CLI that stops waiting for a slow host withdraws its request: the host
// then never runs it, so the CLI's direct attach is the only run; a host in
// time runs it once.
func TestWithdrawnRequestNeverRuns(t *testing.T) {
	dir, err := os.MkdirTemp("", "dtbh") // short: a unix socket path has a limit
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var runs atomic.Int32
	opts := Options{StateDir: dir, Session: "w", Build: "test", Idle: time.Minute, Run: func(ctx context.Context, req *hostwire.Request, stdout, stderr io.Writer) int {
		runs.Add(1)
		io.WriteString(stdout, "ran")
		return 7
	}}
	done := make(chan error, 1)
	go func() { done <- Serve(opts) }()
	paths, _ := PathsFor(dir, "w")
	for i := 0; ; i++ {
		if c, err := hostwire.Dial(paths.Socket, hostwire.AnswerWait); err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatal("the host did not listen")
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer func() {
		// Quit would end the host's process, which is this test's.
		if c, err := hostwire.Dial(paths.Socket, time.Second); err == nil {
			hostwire.WriteFrame(c, hostwire.FrameQuit, nil)
			c.Close()
		}
		<-done
	}()
	client := &hostwire.Client{Paths: paths, Build: "test"}

	beforeStart = func() { time.Sleep(3 * hostwire.AnswerWait) }
	_, err = client.Run(context.Background(), &hostwire.Request{Argv: []string{"dtb", "eval", "1"}}, io.Discard, io.Discard)
	beforeStart = nil
	var un *hostwire.Unavailable
	if !errors.As(err, &un) {
		t.Fatalf("a host slower than the CLI: %v, want Unavailable (the CLI attaches directly)", err)
	}
	time.Sleep(5 * hostwire.AnswerWait)
	if n := runs.Load(); n != 0 {
		t.Fatalf("the withdrawn request ran %d times in the host as well", n)
	}

	code, err := client.Run(context.Background(), &hostwire.Request{Argv: []string{"dtb", "eval", "1"}}, io.Discard, io.Discard)
	if err != nil || code != 7 || runs.Load() != 1 {
		t.Fatalf("a host in time: code %d, %v, %d runs", code, err, runs.Load())
	}
}
