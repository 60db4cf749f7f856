package cdp

import (
	"context"
	"encoding/json"
	"sync"

	proto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
)

// Every protocol call and event of dtb goes through cdproto's typed commands
// and events: proto.Call(ctx, page, page.Navigate, page.NavigateParams{…})
// for one call. The helpers here give the same types to what cdproto has no
// form for: dtb's one-round-trip batching (Pipeline, Post), calls on a Conn's
// own target (the browser), and events read from a channel that a caller
// selects on with others. A method cdproto lacks is spelled in methods.go.

// Command is one Pipeline command of a cdproto command; result, when not nil,
// receives its answer.
func Command[P, R any](c proto.Command[P, R], params P, result *R) Cmd {
	cmd := Cmd{Method: c.Method, Params: params}
	if result != nil {
		cmd.Result = result
	}
	return cmd
}

// Post sends a cdproto command to the tab without waiting for its answer
// (Page.Post).
func Post[P, R any](ctx context.Context, p *Page, c proto.Command[P, R], params P) {
	p.Post(ctx, c.Method, params)
}

// Begin sends a cdproto command to the tab and returns the wait for its
// answer: for a caller that has more to send before that answer comes.
func Begin[P, R any](ctx context.Context, p *Page, c proto.Command[P, R], params P) (wait func() (R, error), err error) {
	w, err := p.conn.send(ctx, p.sessionID, c.Method, params)
	if err != nil {
		return nil, p.tornDown(err)
	}
	return func() (R, error) {
		var res R
		if err := w(&res); err != nil {
			var zero R
			return zero, p.tornDown(err)
		}
		return res, nil
	}, nil
}

// On subscribes to the cdproto event e of the tab until cancel (Page.Events);
// Decode reads what arrives.
func On[E any](p *Page, e proto.Event[E]) (<-chan Event, func()) {
	return p.Events(e.Method)
}

// Decode reads ev as the event e. ok is false when ev is another event or its
// payload does not decode. Invalid UTF-8 (a lone surrogate in page text)
// becomes U+FFFD, as in command answers and with encoding/json.
func Decode[E any](e proto.Event[E], ev Event) (v E, ok bool) {
	if ev.Method != e.Method {
		return v, false
	}
	if err := jsonv2.Unmarshal(ev.Params, &v, jsonv2.AllowInvalidUTF8(true)); err != nil {
		var zero E
		return zero, false
	}
	return v, true
}

// Target is one target of a connection as a cdproto session: the
// connection's own target (the browser, for a browser websocket) with
// sessionID "", else a flattened session.
func (c *Conn) Target(sessionID string) proto.Session {
	return targetSession{c: c, sessionID: sessionID}
}

type targetSession struct {
	c         *Conn
	sessionID string
}

func (t targetSession) Call(ctx context.Context, method string, params, result any) error {
	return t.c.Call(ctx, t.sessionID, method, params, result)
}

func (t targetSession) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	return values(t.c.Subscribe(t.sessionID, method))
}

// values turns a subscription's events into their payloads, as cdproto's
// Session.Subscribe returns them.
// A reader that stops reading and cancels does not leave the copier blocked.
func values(in <-chan Event, cancel func()) (<-chan jsonv2.Value, func()) {
	out := make(chan jsonv2.Value)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(out)
		for e := range in {
			select {
			case out <- jsonv2.Value(e.Params):
			case <-done:
				return
			}
		}
	}()
	return out, func() { once.Do(func() { close(done); cancel() }) }
}

// Arg is v as an argument of Runtime.callFunctionOn, encoded as every
// command's params are (JSON v2, invalid UTF-8 as U+FFFD).
func Arg(v any) (*runtime.CallArgument, error) {
	b, err := jsonv2.Marshal(v, jsonv2.AllowInvalidUTF8(true))
	if err != nil {
		return nil, err
	}
	return &runtime.CallArgument{Value: b}, nil
}

// RawValue is the JSON value of a by-value result, nil when it has none.
func RawValue(o *runtime.RemoteObject) json.RawMessage {
	if o == nil {
		return nil
	}
	return json.RawMessage(o.Value)
}

// NetworkNoBodies are the Network.enable params of every dtb watcher: it
// reads events only, so the browser keeps no bodies for it (a buffer of 0,
// sent explicitly: left out, the browser's default buffers apply).
func NetworkNoBodies() network.EnableParams {
	return network.EnableParams{MaxTotalBufferSize: new(int64(0)), MaxResourceBufferSize: new(int64(0))}
}
