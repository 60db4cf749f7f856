package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// ProtocolError is an error answer of the browser to a CDP command.
type ProtocolError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
	Method  string `json:"-"`
}

func (e *ProtocolError) Error() string {
	s := e.Message
	if e.Data != "" {
		s += " (" + e.Data + ")"
	}
	if e.Method != "" {
		s = e.Method + ": " + s
	}
	return s
}

// ErrConnClosed is returned by calls on a connection that has closed (the browser
// or the tab went away).
var ErrConnClosed = errors.New("CDP connection closed")

type inMessage struct {
	ID        int64          `json:"id,omitempty"`
	SessionID string         `json:"sessionId,omitempty"`
	Method    string         `json:"method,omitempty"`
	Params    jsonv2.Value   `json:"params,omitempty"`
	Result    jsonv2.Value   `json:"result,omitempty"`
	Error     *ProtocolError `json:"error,omitempty"`
	tooLarge  int64          // the answer's size when it was over the limit (not decoded)
}

// Conn is one CDP websocket connection (to a page or to the browser), with a
// reader goroutine that routes answers by id and events to subscribers. Commands
// for flattened target sessions carry a session id (see Conn.Target).
type Conn struct {
	ws      *wsConn
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan *inMessage
	subs    map[string][]*subscription
	done    chan struct{}
	err     error
	once    sync.Once
	// maxMessage, when > 0, bounds the messages decoded (see LimitMessages).
	maxMessage atomic.Int64
}

// Dial connects to a CDP websocket URL (ws:// or wss://) with optional handshake
// headers.
func Dial(ctx context.Context, wsURL string, header http.Header) (*Conn, error) {
	ws, err := dialWS(ctx, wsURL, header)
	if err != nil {
		return nil, err
	}
	c := &Conn{ws: ws, pending: map[int64]chan *inMessage{}, subs: map[string][]*subscription{}, done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

func (c *Conn) readLoop() {
	for {
		data, err := c.ws.readMessage()
		if err != nil {
			c.shutdown(err)
			return
		}
		if max := c.maxMessage.Load(); max > 0 && int64(len(data)) > max {
			c.tooLarge(data)
			continue
		}
		msg := new(inMessage)
		if err := jsonv2.Unmarshal(data, msg, jsonv2.AllowInvalidUTF8(true)); err != nil {
			continue
		}
		if msg.ID != 0 {
			c.mu.Lock()
			ch := c.pending[msg.ID]
			delete(c.pending, msg.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
			continue
		}
		if msg.Method != "" {
			c.mu.Lock()
			subs := append([]*subscription(nil), c.subs[subKey(msg.SessionID, msg.Method)]...)
			subs = append(subs, c.subs[subKey(msg.SessionID, "*")]...)
			c.mu.Unlock()
			for _, s := range subs {
				s.push(Event{Method: msg.Method, SessionID: msg.SessionID, Params: json.RawMessage(msg.Params)})
			}
		}
	}
}

func (c *Conn) shutdown(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		for k, ss := range c.subs {
			for _, s := range ss {
				s.stop()
			}
			delete(c.subs, k)
		}
		c.mu.Unlock()
		close(c.done)
	})
}

// Done is closed when the connection ends.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close closes the websocket. It never closes the target: closing a page's
// websocket only detaches from it.
func (c *Conn) Close() error {
	err := c.ws.close()
	c.shutdown(ErrConnClosed)
	return err
}

// Call sends a command on the connection's own target (sessionID "") or a
// flattened session and decodes the result into result (nil to ignore).
// params and result may be cdproto types; they are encoded with JSON v2 as
// cdproto requires.
func (c *Conn) Call(ctx context.Context, sessionID, method string, params, result any) error {
	id := c.nextID.Add(1)
	var buf bytes.Buffer
	buf.WriteString(`{"id":`)
	buf.WriteString(strconv.FormatInt(id, 10))
	buf.WriteString(`,"method":`)
	mb, _ := json.Marshal(method)
	buf.Write(mb)
	if sessionID != "" {
		buf.WriteString(`,"sessionId":`)
		sb, _ := json.Marshal(sessionID)
		buf.Write(sb)
	}
	if params != nil {
		var pb []byte
		var err error
		if raw, ok := params.(json.RawMessage); ok {
			pb = raw
		} else if pb, err = jsonv2.Marshal(params, jsonv2.AllowInvalidUTF8(true)); err != nil {
			return fmt.Errorf("%s: encoding params: %w", method, err)
		}
		buf.WriteString(`,"params":`)
		buf.Write(pb)
	}
	buf.WriteByte('}')
	ch := make(chan *inMessage, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, closedErr(err))
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.ws.writeText(buf.Bytes()); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case msg, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return fmt.Errorf("%s: %w", method, closedErr(err))
		}
		if msg.Error != nil {
			msg.Error.Method = method
			return msg.Error
		}
		if msg.tooLarge > 0 {
			return &TooLargeError{Method: method, Size: msg.tooLarge, Max: c.maxMessage.Load()}
		}
		if result == nil || len(msg.Result) == 0 {
			return nil
		}
		if raw, ok := result.(*json.RawMessage); ok {
			*raw = append((*raw)[:0], msg.Result...)
			return nil
		}
		if err := jsonv2.Unmarshal(msg.Result, result, jsonv2.AllowInvalidUTF8(true)); err != nil {
			return fmt.Errorf("%s: decoding result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

func closedErr(err error) error {
	if err == nil || errors.Is(err, ErrConnClosed) {
		return ErrConnClosed
	}
	return fmt.Errorf("%w: %v", ErrConnClosed, err)
}

// Event is one CDP event.
type Event struct {
	Method    string
	SessionID string
	Params    json.RawMessage
}

// Subscribe buffers the events of method ("*" for all) on the given session
// (sessionID "" for the connection's own target) until cancel is called. The
// channel closes when the subscription is cancelled or the connection ends.
func (c *Conn) Subscribe(sessionID, method string) (<-chan Event, func()) {
	s := newSubscription()
	k := subKey(sessionID, method)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		s.stop()
		return s.out, func() {}
	}
	c.subs[k] = append(c.subs[k], s)
	c.mu.Unlock()
	return s.out, func() {
		c.mu.Lock()
		ss := c.subs[k]
		for i, x := range ss {
			if x == s {
				c.subs[k] = append(ss[:i:i], ss[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
		s.stop()
	}
}

func subKey(sessionID, method string) string { return sessionID + "\x00" + method }

// subscription is an unbounded event queue feeding a channel, so a slow reader
// never blocks the connection's reader and no event is lost.
type subscription struct {
	mu      sync.Mutex
	queue   []Event
	notify  chan struct{}
	out     chan Event
	stopped chan struct{}
	once    sync.Once
}

func newSubscription() *subscription {
	s := &subscription{notify: make(chan struct{}, 1), out: make(chan Event), stopped: make(chan struct{})}
	go s.pump()
	return s
}

func (s *subscription) push(e Event) {
	s.mu.Lock()
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *subscription) stop() { s.once.Do(func() { close(s.stopped) }) }

func (s *subscription) pump() {
	defer close(s.out)
	for {
		s.mu.Lock()
		var next *Event
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue = s.queue[1:]
			next = &e
		}
		s.mu.Unlock()
		if next == nil {
			select {
			case <-s.notify:
				continue
			case <-s.stopped:
				return
			}
		}
		select {
		case s.out <- *next:
		case <-s.stopped:
			return
		}
	}
}
