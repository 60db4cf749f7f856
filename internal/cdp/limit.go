package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/dtb-cli/dtb/internal/output"
)

// TooLargeError is an answer over the connection's message limit: it was read
// once and dropped, never decoded.
type TooLargeError struct {
	Method    string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the answer is %d bytes, over the limit of %d", e.Method, e.Size, e.Max)
}

// LimitMessages bounds the messages the connection decodes to max bytes (0:
// no limit): an answer over it fails its call with a *TooLargeError, and an
// event over it is dropped, without a copy of it being made.
func (c *Conn) LimitMessages(max int64) { c.maxMessage.Store(max) }

// tooLarge answers the call whose answer data is over the limit. CDP puts the
// id first ({"id":N,…}), so the id is read without decoding the rest.
func (c *Conn) tooLarge(data []byte) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"id":`))
	if !ok {
		return // an event (or an answer without the id first): dropped
	}
	end := bytes.IndexAny(rest, ",}")
	if end <= 0 {
		return
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(rest[:end])), 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- &inMessage{ID: id, tooLarge: int64(len(data))}
	}
}

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
