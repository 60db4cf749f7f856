package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto"

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

// tooLargeMarker marks an answer handed to its caller as over the limit.
const tooLargeMarker cdproto.MethodType = "dtb.tooLarge"

// tooLarge fails the call whose answer is over the limit and drops the
// message (an event over it is dropped too). chromedp's transport decodes
// every message, so the limit bounds what dtb keeps and prints, not what it
// reads once.
func (c *Conn) tooLarge(msg *cdproto.Message) {
	if msg.ID == 0 {
		return
	}
	c.mu.Lock()
	ch := c.pending[msg.ID]
	delete(c.pending, msg.ID)
	c.mu.Unlock()
	if ch != nil {
		ch <- &cdproto.Message{ID: msg.ID, Method: tooLargeMarker, Result: msg.Result}
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
