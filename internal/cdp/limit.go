package cdp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dtb-cli/dtb/internal/output"
)

// EvaluateLimited is Evaluate whose value may be at most max bytes of JSON
// (0: no limit): a larger one fails result-too-large with its size, and dtb
// never holds more than the one message it read.
func (p *Page) EvaluateLimited(ctx context.Context, expr string, awaitPromise bool, max int64) (json.RawMessage, error) {
	if max > 0 {
		// The answer wraps the value in about a hundred bytes of envelope.
		p.conn.LimitMessages(max + 256)
		defer p.conn.LimitMessages(0)
	}
	v, err := p.Evaluate(ctx, expr, awaitPromise)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return nil, output.TooLarge(tl.Size, max)
	}
	return v, err
}

// LimitMessages bounds the tab connection's messages to max bytes (0: no
// limit): an answer over it fails its call (TooLargeError), an event over it
// is read through, dropped and counted in DroppedEvent.
func (p *Page) LimitMessages(max int64) { p.conn.LimitMessages(max) }

// DroppedEvent is the size of the largest event the limit dropped, or 0.
func (p *Page) DroppedEvent() int64 { return p.conn.droppedEvent.Load() }
