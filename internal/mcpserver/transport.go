package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineTransport is newline-delimited JSON-RPC over stdio, in place of the
// SDK's IOTransport, which ends the session on one line it cannot decode
// (go-sdk issue #1209). Here a line that is no JSON is answered -32700 and one
// that is no request (an object without jsonrpc 2.0 or method, a batch array)
// -32600, and the server reads on. It also keeps the spec's rule that a
// cancelled request gets no response: the SDK answers one anyway.
type lineTransport struct {
	in  io.ReadCloser
	out io.Writer
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{in: t.in, out: t.out, lines: make(chan lineRead, 1), closed: make(chan struct{}), inflight: map[any]bool{}, cancelled: map[any]bool{}}
	go c.readLines()
	return c, nil
}

// maxLine bounds one message: a tool call's arguments are small, and a line
// without end must not grow the server's memory without end.
const maxLine = 16 << 20

type lineRead struct {
	line []byte
	err  error
}

type lineConn struct {
	in     io.ReadCloser
	out    io.Writer
	lines  chan lineRead
	closed chan struct{}
	once   sync.Once

	wmu sync.Mutex // one message per line, whole
	// inflight are the ids of calls read and not yet answered; cancelled the
	// ones of those the client gave up (notifications/cancelled).
	mu        sync.Mutex
	inflight  map[any]bool
	cancelled map[any]bool
}

func (c *lineConn) readLines() {
	r := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, err := readLine(r)
		select {
		case c.lines <- lineRead{line, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

var errLineTooLong = errors.New("line over the size limit")

// readLine reads one line without its newline; a line over maxLine is read to
// its end and reported as errLineTooLong with no content.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		part, err := r.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, part...)
			if len(buf) > maxLine {
				tooLong, buf = true, nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || len(buf) == 0) && !tooLong {
			return nil, err
		}
		if tooLong {
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errLineTooLong
		}
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var lr lineRead
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case lr = <-c.lines:
		}
		if lr.err == errLineTooLong {
			c.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is over %d bytes", maxLine))
			continue
		}
		if lr.err == io.EOF {
			// The client closed its input: the calls it already sent are
			// still answered (a script that pipes its requests in and
			// closes stdin gets every answer) before the session ends.
			c.drain(ctx)
			return nil, io.EOF
		}
		if lr.err != nil {
			return nil, lr.err
		}
		if len(bytes.TrimSpace(lr.line)) == 0 {
			continue
		}
		msg, ok := c.decode(lr.line)
		if !ok {
			continue
		}
		if req, isReq := msg.(*jsonrpc.Request); isReq {
			c.track(req)
		}
		return msg, nil
	}
}

// drain waits until every call read has been answered, the connection
// closes or ctx ends.
func (c *lineConn) drain(ctx context.Context) {
	for {
		c.mu.Lock()
		n := len(c.inflight)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// decode checks one line and answers it when it is no message the SDK can take.
func (c *lineConn) decode(line []byte) (jsonrpc.Message, bool) {
	var raw any
	if err := json.Unmarshal(line, &raw); err != nil {
		c.answer(nil, jsonrpc.CodeParseError, "parse error: "+err.Error())
		return nil, false
	}
	obj, isObj := raw.(map[string]any)
	if !isObj {
		if _, isBatch := raw.([]any); isBatch {
			c.answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line")
		} else {
			c.answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object")
		}
		return nil, false
	}
	id := obj["id"]
	switch id.(type) {
	case nil, string, float64:
	default:
		id = nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		// A reply must not answer a notification: only a message with an id, or
		// none at all, gets one.
		c.answer(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "" {
		c.answer(id, jsonrpc.CodeInvalidRequest, "invalid request: no method")
		return nil, false
	}
	return msg, true
}

// track records calls in flight and the client's cancellations of them.
func (c *lineConn) track(req *jsonrpc.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.IsCall() {
		c.inflight[req.ID.Raw()] = true
		return
	}
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil && c.inflight[id.Raw()] {
		c.cancelled[id.Raw()] = true
	}
}

// answer writes an error response to a line the server could not take.
func (c *lineConn) answer(id any, code int64, message string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	_ = c.writeLine(b)
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		id := resp.ID.Raw()
		drop := c.cancelled[id]
		delete(c.inflight, id)
		delete(c.cancelled, id)
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		_ = c.in.Close()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
