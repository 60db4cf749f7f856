package cdp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/dtb-cli/dtb/internal/output"
)

// Page is a connection to one tab: its own websocket (/devtools/page/<id>) when
// the browser has a discovery endpoint, else a flattened session over the
// browser websocket. Closing a Page only detaches; the tab stays open.
//
// Page implements cdproto's cdp.Session, so typed calls work:
//
//	res, err := cdp.Call(ctx, page, runtime.Evaluate, runtime.EvaluateParams{…})
type Page struct {
	ID    string
	Alias string
	Owned bool

	conn      *Conn
	sessionID string // flattened session over the browser websocket; "" for a page websocket
	ownConn   bool
}

// Call sends a raw CDP command to the tab. params and result may be cdproto
// types, maps, json.RawMessage or nil.
func (p *Page) Call(ctx context.Context, method string, params, result any) error {
	return p.tornDown(p.conn.Call(ctx, p.sessionID, method, params, result))
}

// Pipeline sends cmds to the tab in order without waiting for each answer
// (Conn.Pipeline): several commands for one round trip.
func (p *Page) Pipeline(ctx context.Context, cmds ...Cmd) error {
	return p.tornDown(p.conn.Pipeline(ctx, p.sessionID, cmds...))
}

// Post sends a command to the tab without waiting for its answer: the
// browser handles a tab's commands in order, so every command sent after it
// sees its effect (and one sent to a blocked page does not hold up the caller).
func (p *Page) Post(ctx context.Context, method string, params any) {
	if wait, err := p.conn.send(ctx, p.sessionID, method, params); err == nil {
		go wait(nil)
	}
}

// tornDown says a closed connection as the tab having gone away.
func (p *Page) tornDown(err error) error {
	if err != nil && errors.Is(err, ErrConnClosed) {
		return p.Ended("the command", err)
	}
	return err
}

// Ended is the error of a command whose connection to the tab ended during
// what it was doing: browser-gone (exit 5). From the connection alone dtb
// cannot tell a closed tab from a browser that went away or a service in
// between that cut the connection; cause, when known, says what the
// connection reported.
func (p *Page) Ended(during string, cause error) error {
	msg := "the connection to the tab ended during " + during + " (the tab closed, the browser went away, or a service in between cut the connection)"
	if cause != nil {
		return output.Wrap("browser-gone", cause, msg).With("tab", p.ID)
	}
	return output.Errorf("browser-gone", "%s", msg).With("tab", p.ID)
}

// Events subscribes to a CDP event of the tab ("*" for all) until cancel.
func (p *Page) Events(method string) (<-chan Event, func()) {
	return p.conn.Subscribe(p.sessionID, method)
}

// EventsCounted is Events with the count of events read for it so far
// (see Conn.SubscribeCounted).
func (p *Page) EventsCounted(method string) (<-chan Event, func() int64, func()) {
	return p.conn.SubscribeCounted(p.sessionID, method)
}

// Subscribe implements cdproto's cdp.Session.
func (p *Page) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	return values(p.Events(method))
}

// Done is closed when the tab's connection ends.
func (p *Page) Done() <-chan struct{} { return p.conn.Done() }

// Close detaches from the tab (never closes it).
func (p *Page) Close() error {
	if p.ownConn {
		return p.conn.Release()
	}
	if p.sessionID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		proto.Call(ctx, p.conn.Target(""), target.DetachFromTarget, target.DetachFromTargetParams{SessionID: target.SessionID(p.sessionID)})
	}
	return nil
}

// Evaluate runs expr in the page's main world and returns its value as JSON
// (returnByValue); with awaitPromise a promise is awaited. An exception is a
// "threw" error with message, line, column and url (1-based line and column).
// undefined is returned as null; NaN, Infinity, -0 and bigints as strings.
// Right after a launch the first evaluation can meet a navigating target; it is
// retried briefly.
func (p *Page) Evaluate(ctx context.Context, expr string, awaitPromise bool) (json.RawMessage, error) {
	params := runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)}
	if awaitPromise {
		params.AwaitPromise = ptr(true)
	}
	var res runtime.EvaluateResult
	for attempt := 0; ; attempt++ {
		var err error
		res, err = proto.Call(ctx, p, runtime.Evaluate, params)
		if err == nil {
			break
		}
		var pe *ProtocolError
		if attempt < 20 && errors.As(err, &pe) && (strings.Contains(pe.Message, "navigated or closed") || strings.Contains(pe.Message, "Cannot find default execution context")) {
			select {
			case <-time.After(25 * time.Millisecond):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, threwError(res.ExceptionDetails)
	}
	return remoteValue(res.Result), nil
}

// CallJS evaluates the JavaScript function source fn (e.g. an embedded .js file
// holding "(a, b) => …") applied to args, each encoded as a JSON literal, so no
// page or user text is ever spliced into code.
func (p *Page) CallJS(ctx context.Context, fn string, awaitPromise bool, args ...any) (json.RawMessage, error) {
	var b strings.Builder
	b.WriteString("(")
	b.WriteString(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(fn), ";")))
	b.WriteString(")(")
	for i, a := range args {
		if i > 0 {
			b.WriteString(",")
		}
		j, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		b.Write(j)
	}
	b.WriteString(")")
	return p.Evaluate(ctx, b.String(), awaitPromise)
}

func ptr[T any](v T) *T { return &v }

func remoteValue(o *runtime.RemoteObject) json.RawMessage {
	if o == nil {
		return json.RawMessage("null")
	}
	if len(o.Value) > 0 {
		return json.RawMessage(o.Value)
	}
	if o.UnserializableValue != "" {
		b, _ := json.Marshal(string(o.UnserializableValue))
		return b
	}
	return json.RawMessage("null")
}

func threwError(d *runtime.ExceptionDetails) *output.Error {
	msg := d.Text
	if d.Exception != nil {
		if d.Exception.Description != "" {
			msg = d.Exception.Description
		} else if len(d.Exception.Value) > 0 {
			var s any
			if json.Unmarshal(d.Exception.Value, &s) == nil {
				msg = fmt.Sprintf("Uncaught %v", s)
			}
		}
	}
	first, stack, _ := strings.Cut(msg, "\n")
	e := output.Errorf("threw", "%s", first).
		With("line", d.LineNumber+1).
		With("column", d.ColumnNumber+1)
	if d.URL != "" {
		e.With("url", d.URL)
	}
	if st := strings.TrimSpace(stack); st != "" {
		e.With("stack", st)
	}
	return e
}

// TabRef names a tab in results.
type TabRef struct {
	ID    string `json:"id"`
	Alias string `json:"alias"`
}

func TabName(id, alias string) string {
	if alias != "" {
		return alias + " (" + ShortID(id) + ")"
	}
	return ShortID(id)
}

func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
