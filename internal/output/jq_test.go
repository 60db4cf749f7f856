package output

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"
)

// Programs that never end: each stops with its reason instead of running (or
// growing) until the process is killed.
func TestJQRunaway(t *testing.T) {
	for _, c := range []struct {
		name, program string
		opts          Options
		ctx           func() (context.Context, context.CancelFunc)
		reason        string
	}{
		// A loop without output ends at the command's deadline.
		{"loop at deadline", "def f: f; f", Options{}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, "timeout"},
		// Ctrl-C or SIGTERM cancel the context: interrupted.
		{"loop interrupted", "def f: f; f", Options{}, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			return ctx, cancel
		}, "interrupted"},
		// Endless output stops at the output ceiling, not at the deadline.
		{"endless output", "repeat(1)", Options{MaxBytes: 1 << 20}, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, "result-too-large"},
		// One value that grows by recursion stops at the memory budget.
		{"growing value", "def f: [f]; f", Options{MaxBytes: 1 << 20}, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, "bad-jq"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := c.ctx()
			defer cancel()
			c.opts.JQ = c.program
			var out bytes.Buffer
			p := New(c.opts, &out, &bytes.Buffer{})
			if err := p.Prepare(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- p.Result(ctx, 1) }()
			select {
			case err := <-done:
				if e := AsError(err); e == nil || e.Reason != c.reason || out.Len() != 0 {
					t.Fatalf("got %v (%+v), stdout %d bytes", err, e, out.Len())
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the program was not stopped")
			}
		})
	}
}

// The watcher calls over once the heap grows past the budget, and not before.
func TestWatchMemory(t *testing.T) {
	runtime.GC() // the base is the last collection's live heap: not an earlier test's
	fired := make(chan struct{})
	stop := watchMemory(64<<20, func() { close(fired) })
	defer stop()
	select {
	case <-fired:
		t.Fatal("fired without growth")
	case <-time.After(50 * time.Millisecond):
	}
	var keep [][]byte
	for i := 0; i < 20; i++ {
		keep = append(keep, bytes.Repeat([]byte{1}, 8<<20))
	}
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("did not fire after 160 MiB")
	}
	runtime.KeepAlive(keep)
}
