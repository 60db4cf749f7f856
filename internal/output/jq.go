package output

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/itchyny/gojq"
)

// A jq program is code the user (or a model) hands to dtb: it can loop forever
// (def f: f; f), emit without end (repeat(1)) or recurse into one ever-growing
// value (def f: [f]; f). So it runs under the command's context, its outputs
// count against the output ceiling as they come (Printer.Result), and its
// working memory has a budget.

// jqMemoryBudget is how much the heap may grow while a program runs, for a
// result ceiling of max bytes (0: none). A filter's values are a few times the
// size of what it prints; the fixed part leaves room for the input's own copies.
func jqMemoryBudget(max int64) uint64 {
	if max <= 0 {
		return 2 << 30
	}
	return 256<<20 + 8*uint64(max)
}

// jqMemoryPoll is how often the heap is sampled while a program runs: a
// runaway recursion grows some 300 MB/s, so the overshoot stays a few MB.
const jqMemoryPoll = 10 * time.Millisecond

var errJQMemory = errors.New("jq program over its memory budget")

// Each runs a compiled program over v under ctx and calls emit with every output
// value, in order. It stops at the first error: the program's own (bad-jq), emit's,
// the context's end (timeout or interrupted), or the heap growing past budget
// bytes while it runs (bad-jq; 0: no budget).
func Each(ctx context.Context, code *gojq.Code, v any, args map[string]string, budget uint64, emit func(any) error) error {
	in, err := Normalize(v)
	if err != nil {
		return Errorf("failed", "result is not JSON: %v", err)
	}
	_, values := argNames(args)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if budget > 0 {
		stop := watchMemory(budget, func() { cancel(errJQMemory) })
		defer stop()
	}
	iter := code.RunWithContext(ctx, in, values...)
	for {
		o, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := o.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			if ctx.Err() != nil {
				return jqStopped(ctx, budget)
			}
			return Errorf("bad-jq", "jq: %v", err)
		}
		if err := emit(o); err != nil {
			return err
		}
	}
}

// jqStopped says why a program was stopped from outside.
func jqStopped(ctx context.Context, budget uint64) *Error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errJQMemory):
		return Errorf("bad-jq", "jq: the program used over %d MiB of memory and was stopped (a recursion that never ends?)", budget>>20).With("memoryBudget", budget)
	case errors.Is(cause, context.DeadlineExceeded):
		return Wrap("timeout", cause, "the jq program was still running at the command's deadline (--timeout)")
	default:
		return AsError(cause)
	}
}

// Query runs a compiled program over v under ctx and returns every output value;
// its memory budget is the default ceiling's.
func Query(ctx context.Context, code *gojq.Code, v any, args map[string]string) ([]any, error) {
	var outs []any
	err := Each(ctx, code, v, args, jqMemoryBudget(DefaultMaxBytes), func(o any) error {
		outs = append(outs, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// watchMemory calls over once the heap has grown more than budget bytes over
// the live heap at the call, until stop is called. Heap samples count garbage
// too, so a sample over budget is confirmed after a collection before over is
// called. The base is the live heap of the last collection (garbage left by
// earlier work is not counted as room).
func watchMemory(budget uint64, over func()) (stop func()) {
	base := min(heapBytes(), liveBytes())
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(jqMemoryPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if heapBytes() < base+budget {
				continue
			}
			runtime.GC()
			if heapBytes() >= base+budget {
				over()
				return
			}
		}
	}()
	return func() { close(done); <-exited }
}

func heapBytes() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

func liveBytes() uint64 { return readMetric("/gc/heap/live:bytes") }

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
