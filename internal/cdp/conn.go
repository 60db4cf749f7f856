package cdp

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
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

// HandshakeError is a websocket upgrade the server refused; Status is its HTTP
// status (Chrome answers 404/500 for an unknown target).
type HandshakeError struct {
	Status int
	err    error
}

func (e *HandshakeError) Error() string { return e.err.Error() }
func (e *HandshakeError) Unwrap() error { return e.err }

// Conn is one CDP websocket connection (to a page or to the browser), with a
// reader goroutine that routes answers by id and events to subscribers. Commands
// for flattened target sessions carry a session id (see Conn.Target). The
// websocket is dtb's own (websocket.go).
type Conn struct {
	ws      *wsConn
	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan *cdproto.Message
	subs    map[string][]*subscription
	done    chan struct{}
	err     error
	once    sync.Once
	// maxMessage, when > 0, bounds the messages used (see LimitMessages);
	// droppedEvent is the size of the largest event dropped over it.
	maxMessage, droppedEvent atomic.Int64
	// pooled: the connection came from Pool (see pool.go).
	pooled bool
	// holds: work still using the connection after its command (Hold).
	holds sync.WaitGroup
	// enabled: the "session\x00what" that OncePerConn set up on this connection.
	enabled sync.Map
	// memo: what a command left for the next (Page.Memo), memoGen counts
	// its forgettings; runtimeOn: a command enabled Runtime.
	memoMu    sync.Mutex
	memo      map[string]string
	memoGen   uint64
	runtimeOn atomic.Bool
}

// Dial connects to a CDP websocket URL (ws:// or wss://) with optional handshake
// headers, verifying a wss:// server against the system's roots.
func Dial(ctx context.Context, wsURL string, header http.Header) (*Conn, error) {
	return DialTLS(ctx, wsURL, header, nil)
}

// DialTLS is Dial verifying a wss:// server with tlsConf (nil: the system's
// roots; --cdp-ca adds a private CA).
func DialTLS(ctx context.Context, wsURL string, header http.Header, tlsConf *tls.Config) (*Conn, error) {
	ws, err := dialWS(ctx, wsURL, header, tlsConf)
	if err != nil {
		return nil, err
	}
	c := &Conn{ws: ws, pending: map[int64]chan *cdproto.Message{}, subs: map[string][]*subscription{}, done: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

func (c *Conn) readLoop() {
	for {
		data, size, err := c.ws.readMessage(c.maxMessage.Load)
		switch {
		case err == errNotText:
			continue // a binary frame: not CDP, skip it
		case err == errTooBig:
			c.tooLarge(leadingID(data), size)
			continue
		case err != nil:
			c.shutdown(err)
			return
		}
		msg := new(cdproto.Message)
		if err := jsonv2.Unmarshal(data, msg, jsonv2.DefaultOptionsV2(), jsonv2.AllowInvalidUTF8(true)); err != nil {
			continue // not a CDP message
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
			method, session := string(msg.Method), string(msg.SessionID)
			if forgetOn[method] {
				c.forgetMemos()
			}
			c.mu.Lock()
			subs := append([]*subscription(nil), c.subs[subKey(session, method)]...)
			subs = append(subs, c.subs[subKey(session, "*")]...)
			c.mu.Unlock()
			for _, s := range subs {
				s.push(Event{Method: method, SessionID: session, Params: json.RawMessage(msg.Params)})
			}
		}
	}
}

// leadingID is the id of a message whose head is {"id":N,… (Chrome writes
// an answer's id first), or 0.
func leadingID(head []byte) int64 {
	s := strings.TrimLeft(string(head), " \t\r\n")
	if !strings.HasPrefix(s, `{"id":`) {
		return 0
	}
	s = s[len(`{"id":`):]
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return 0
	}
	id, _ := strconv.ParseInt(s[:end], 10, 64)
	return id
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

// Ended reports whether the connection has ended, including a peer that
// closed or reset it before the read loop noticed (a killed browser). An ended
// connection is shut down, so its callers see ErrConnClosed.
func (c *Conn) Ended() bool {
	select {
	case <-c.done:
		return true
	default:
	}
	if c.ws.peerClosed() {
		c.ws.close()
		c.shutdown(ErrConnClosed)
		return true
	}
	return false
}

// Close closes the websocket. It never closes the target: closing a page's
// websocket only detaches from it. chromedp's websocket Close sends the close
// frame and, while a reader is blocked in Read, waits (up to 1 s) for that reader
// to see the peer's answer; readLoop always reads, and Chrome drops the TCP
// connection on a close frame, so this returns in well under a millisecond. (A
// transport whose reader has stopped reading would wait out the full second.)
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
	wait, err := c.send(ctx, sessionID, method, params)
	if err != nil {
		return err
	}
	return wait(result)
}

// Cmd is one command of a Pipeline.
type Cmd struct {
	Method         string
	Params, Result any
}

// Pipeline sends cmds in order without waiting for each answer before the
// next, then waits for every answer; it returns the first error in command
// order. The browser handles a target's commands in the order they arrive, so
// this is Call after Call without a round trip (and, for input events, without
// a frame) between them.
func (c *Conn) Pipeline(ctx context.Context, sessionID string, cmds ...Cmd) error {
	waits := make([]func(any) error, 0, len(cmds))
	var sendErr error
	for _, cmd := range cmds {
		wait, err := c.send(ctx, sessionID, cmd.Method, cmd.Params)
		if err != nil {
			sendErr = err
			break
		}
		waits = append(waits, wait)
	}
	var first error
	for i, wait := range waits {
		if err := wait(cmds[i].Result); err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		first = sendErr
	}
	return first
}

// send writes one command and returns the wait for its answer.
func (c *Conn) send(ctx context.Context, sessionID, method string, params any) (func(result any) error, error) {
	msg := &cdproto.Message{ID: c.nextID.Add(1), SessionID: target.SessionID(sessionID), Method: cdproto.MethodType(method)}
	if params != nil {
		if raw, ok := params.(json.RawMessage); ok {
			msg.Params = jsonv2.Value(raw)
		} else {
			pb, err := jsonv2.Marshal(params, jsonv2.AllowInvalidUTF8(true))
			if err != nil {
				return nil, fmt.Errorf("%s: encoding params: %w", method, err)
			}
			msg.Params = pb
		}
	}
	if method == runtime.Enable.Method {
		c.runtimeOn.Store(true)
	}
	ch := make(chan *cdproto.Message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, closedErr(err))
	}
	c.pending[msg.ID] = ch
	c.mu.Unlock()
	data, err := jsonv2.Marshal(msg, jsonv2.DefaultOptionsV2(), jsonv2.AllowInvalidUTF8(true))
	if err != nil {
		c.mu.Lock()
		delete(c.pending, msg.ID)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if err := c.ws.writeText(data); err != nil {
		// A failed write leaves a broken frame behind: the connection is
		// over, as for the peer closing it (the tab or browser went away).
		c.ws.close()
		c.shutdown(err)
		return nil, fmt.Errorf("%s: %w", method, closedErr(err))
	}
	return func(result any) error { return c.await(ctx, msg.ID, method, ch, result) }, nil
}

// await waits for the answer to command id and decodes it into result.
func (c *Conn) await(ctx context.Context, id int64, method string, ch chan *cdproto.Message, result any) error {
	select {
	case ans, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return fmt.Errorf("%s: %w", method, closedErr(err))
		}
		if ans.Error != nil {
			return &ProtocolError{Code: ans.Error.Code, Message: ans.Error.Message, Method: method}
		}
		if ans.Method == tooLargeMarker {
			size, _ := strconv.ParseInt(string(ans.Params), 10, 64)
			return &TooLargeError{Method: method, Size: size, Max: c.maxMessage.Load()}
		}
		if result == nil || len(ans.Result) == 0 {
			return nil
		}
		if raw, ok := result.(*json.RawMessage); ok {
			*raw = append((*raw)[:0], ans.Result...)
			return nil
		}
		if err := jsonv2.Unmarshal(ans.Result, result, jsonv2.AllowInvalidUTF8(true)); err != nil {
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
	ch, _, cancel := c.SubscribeCounted(sessionID, method)
	return ch, cancel
}

// SubscribeCounted is Subscribe that also gives the number of events read
// for the subscription so far. The connection reads its messages in order,
// so once an answer is in, every event the browser sent before it is
// counted: a reader that has taken fewer from the channel has those still to
// come.
func (c *Conn) SubscribeCounted(sessionID, method string) (<-chan Event, func() int64, func()) {
	s := newSubscription()
	k := subKey(sessionID, method)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		s.stop()
		return s.out, s.pushed.Load, func() {}
	}
	c.subs[k] = append(c.subs[k], s)
	c.mu.Unlock()
	return s.out, s.pushed.Load, func() {
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
	pushed  atomic.Int64 // events queued so far
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
	s.pushed.Add(1)
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

// tooLarge fails call id (0: an event, dropped), whose answer of size bytes
// was over the limit and was read through without being kept.
func (c *Conn) tooLarge(id, size int64) {
	if id == 0 {
		for {
			if old := c.droppedEvent.Load(); size <= old || c.droppedEvent.CompareAndSwap(old, size) {
				return
			}
		}
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- &cdproto.Message{ID: id, Method: tooLargeMarker, Params: jsonv2.Value(strconv.FormatInt(size, 10))}
	}
}
