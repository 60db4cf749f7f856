package pagedata

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// Recording holds the network record of every tab the session host has used;
// nil in a dtb process that attaches for one command (the host sets it).
var Recording *Recorder

// RecordLimit is how many requests a tab's record keeps (the oldest go first).
const RecordLimit = 5000

// BodyLimit caps a body `dtb network --body` prints.
const BodyLimit = 4 << 20

// Recorder keeps, per tab, a connection of its own with the Network domain on,
// so that the requests a page makes between and during commands are known
// with methods, statuses, headers and bodies (the resource-timing path sees
// none of these).
type Recorder struct {
	mu   sync.Mutex
	tabs map[string]*tabRecord // by target id
}

// NewRecorder is an empty recorder.
func NewRecorder() *Recorder { return &Recorder{tabs: map[string]*tabRecord{}} }

type tabRecord struct {
	ready chan struct{} // closed once conn is set, or the start failed
	conn  *cdp.Conn
	mu    sync.Mutex
	reqs  []*hostRequest // oldest first, at most RecordLimit
	byID  map[string]*hostRequest
	since time.Time
}

type hostRequest struct {
	Request
	start float64
}

// Watch starts recording the tab behind wsURL (a page's websocket) on a
// connection dial opens, unless it is recorded already. It returns once the
// Network domain is on (or the attempt failed): a request the next command
// causes is recorded. Commands racing on a new tab wait for one recording.
func (r *Recorder) Watch(ctx context.Context, wsURL string, dial func(context.Context) (*cdp.Conn, error)) {
	if r == nil {
		return
	}
	id := path.Base(wsURL)
	if !strings.Contains(wsURL, "/devtools/page/") || id == "" {
		return
	}
	for {
		r.mu.Lock()
		t := r.tabs[id]
		if t == nil {
			t = &tabRecord{ready: make(chan struct{}), byID: map[string]*hostRequest{}, since: time.Now()}
			r.tabs[id] = t
			r.mu.Unlock()
			if !t.start(ctx, dial) {
				r.forget(id, t)
			}
			return
		}
		r.mu.Unlock()
		select {
		case <-t.ready:
		case <-ctx.Done():
			return
		}
		if t.alive() {
			return
		}
		r.forget(id, t) // its tab's connection ended (or never opened): start again
	}
}

// start opens the record's connection and turns the Network domain on; it
// reports whether the tab is recorded. ready is closed either way.
func (t *tabRecord) start(ctx context.Context, dial func(context.Context) (*cdp.Conn, error)) bool {
	defer close(t.ready)
	c, err := dial(ctx)
	if err != nil {
		return false
	}
	events, _ := c.Subscribe("", "*")
	// Bodies stay in the browser (its default buffers) until --body asks.
	if err := c.Call(ctx, "", "Network.enable", nil, nil); err != nil {
		c.Close()
		return false
	}
	t.conn = c
	go t.collect(events)
	return true
}

// alive: set up, and its connection still open. Only after ready.
func (t *tabRecord) alive() bool {
	if t.conn == nil {
		return false
	}
	select {
	case <-t.conn.Done():
		return false
	default:
		return true
	}
}

func (r *Recorder) forget(id string, t *tabRecord) {
	r.mu.Lock()
	if r.tabs[id] == t {
		delete(r.tabs, id)
	}
	r.mu.Unlock()
}

// Close ends every recording.
func (r *Recorder) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	tabs := r.tabs
	r.tabs = map[string]*tabRecord{}
	r.mu.Unlock()
	for _, t := range tabs {
		select {
		case <-t.ready:
			if t.conn != nil {
				t.conn.Close()
			}
		default: // still starting: its connection ends with the host
		}
	}
}

// record is the tab's record, nil when the tab is not recorded.
func (r *Recorder) record(tabID string) *tabRecord {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	t := r.tabs[tabID]
	r.mu.Unlock()
	if t == nil {
		return nil
	}
	select {
	case <-t.ready:
	default:
		return nil
	}
	if !t.alive() {
		return nil
	}
	return t
}

// recEvent is the part of the Network events the recorder reads.
type recEvent struct {
	RequestID string  `json:"requestId"`
	Timestamp float64 `json:"timestamp"`
	WallTime  float64 `json:"wallTime"`
	Type      string  `json:"type"`
	Request   struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
	Response *struct {
		liveResponse
		Headers  map[string]string `json:"headers"`
		MimeType string            `json:"mimeType"`
	} `json:"response"`
	RedirectResponse *liveResponse `json:"redirectResponse"`
	Initiator        *struct {
		Type string `json:"type"`
	} `json:"initiator"`
	EncodedDataLength float64 `json:"encodedDataLength"`
	ErrorText         string  `json:"errorText"`
	BlockedReason     string  `json:"blockedReason"`
}

func (t *tabRecord) collect(events <-chan cdp.Event) {
	for ev := range events {
		if !strings.HasPrefix(ev.Method, "Network.") {
			continue
		}
		var e recEvent
		if json.Unmarshal(ev.Params, &e) != nil {
			continue
		}
		t.mu.Lock()
		t.apply(ev.Method, &e)
		t.mu.Unlock()
	}
}

func (t *tabRecord) apply(method string, e *recEvent) {
	r := t.byID[e.RequestID]
	switch method {
	case "Network.requestWillBeSent":
		var redirects []string
		if r != nil && e.RedirectResponse != nil {
			// A redirect: the same id goes on with the next hop; the hop
			// it ends is remembered in Redirects.
			redirects = append(r.Redirects, r.URL)
			r.respond(e.RedirectResponse)
			r.end(e.Timestamp)
		}
		m := e.Request.Method
		n := &hostRequest{Request: Request{ID: e.RequestID, URL: e.Request.URL, Method: &m, Type: strings.ToLower(e.Type),
			Source: "host", RequestHeaders: redact(e.Request.Headers), Redirects: redirects, at: msTime(e.WallTime * 1000)}, start: e.Timestamp}
		if e.Initiator != nil {
			n.Initiator = e.Initiator.Type
		}
		n.Time = n.at.Format(timeLayout)
		if r != nil {
			t.drop(r)
		}
		t.byID[e.RequestID] = n
		t.reqs = append(t.reqs, n)
		if len(t.reqs) > RecordLimit {
			old := t.reqs[0]
			t.reqs = t.reqs[1:]
			if t.byID[old.ID] == old {
				delete(t.byID, old.ID)
			}
		}
	case "Network.responseReceived":
		if r != nil && e.Response != nil {
			r.respond(&e.Response.liveResponse)
			r.ResponseHeaders = redact(e.Response.Headers)
			r.MimeType = e.Response.MimeType
			if e.Type != "" {
				r.Type = strings.ToLower(e.Type)
			}
		}
	case "Network.loadingFinished":
		if r != nil {
			r.end(e.Timestamp)
			size := int(e.EncodedDataLength)
			r.TransferSize = &size
		}
	case "Network.loadingFailed":
		if r != nil {
			r.end(e.Timestamp)
			r.Failed = true
			r.Failure = e.ErrorText
			if e.BlockedReason != "" {
				r.Failure += " (blocked: " + e.BlockedReason + ")"
			}
		}
	}
}

func (t *tabRecord) drop(r *hostRequest) {
	for i, x := range t.reqs {
		if x == r {
			t.reqs = append(t.reqs[:i:i], t.reqs[i+1:]...)
			return
		}
	}
}

func (r *hostRequest) respond(resp *liveResponse) {
	lr := liveRequest{Request: r.Request}
	lr.respond(resp)
	r.Request = lr.Request
}

func (r *hostRequest) end(ts float64) {
	r.DurationMs = float64(int((ts-r.start)*10000)) / 10
}

// secretHeaders are the headers whose values the record leaves out.
var secretHeaders = map[string]bool{"cookie": true, "set-cookie": true, "authorization": true, "proxy-authorization": true}

func redact(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if secretHeaders[strings.ToLower(k)] {
			v = "(redacted)"
		}
		out[k] = v
	}
	return out
}

// requests is a copy of the tab's record.
func (t *tabRecord) requests() []Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Request, len(t.reqs))
	for i, r := range t.reqs {
		out[i] = r.Request
	}
	return out
}

// Body is a response body `dtb network --body` prints.
type Body struct {
	Tab      cdp.TabRef `json:"tab"`
	ID       string     `json:"id"`
	URL      string     `json:"url"`
	MimeType string     `json:"mimeType,omitempty"`
	Bytes    int        `json:"bytes"`
	// Base64: Body is the base64 of binary bytes.
	Base64    bool   `json:"base64"`
	Truncated bool   `json:"truncated,omitempty"`
	Body      string `json:"body"`
}

// ReadBody is the body of the response to request id on the tab, as the
// session host recorded it.
func ReadBody(ctx context.Context, p *cdp.Page, id string) (*Body, error) {
	t := Recording.record(p.ID)
	if t == nil {
		return nil, output.Errorf("no-such-request", "no network record of this tab: bodies are recorded by the session host (not with DTB_HOST=off or --cdp)").With("tab", p.ID)
	}
	t.mu.Lock()
	r := t.byID[id]
	var req Request
	if r != nil {
		req = r.Request
	}
	t.mu.Unlock()
	if r == nil {
		return nil, output.Errorf("no-such-request", "no request %s in the tab's record (ids are in dtb network's list)", id).With("tab", p.ID).With("id", id)
	}
	var res struct {
		Body          string `json:"body"`
		Base64Encoded bool   `json:"base64Encoded"`
	}
	if err := t.conn.Call(ctx, "", "Network.getResponseBody", map[string]any{"requestId": id}, &res); err != nil {
		return nil, output.Wrap("no-such-request", err, "the browser has no body for request "+id+" (none yet, a redirect, or evicted)").With("id", id).With("url", req.URL)
	}
	b := &Body{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, ID: id, URL: req.URL, MimeType: req.MimeType}
	raw := []byte(res.Body)
	if res.Base64Encoded {
		dec, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			return nil, output.Wrap("failed", err, "decoding the body")
		}
		raw = dec
	}
	b.Bytes = len(raw)
	if len(raw) > BodyLimit {
		raw, b.Truncated = raw[:BodyLimit], true
		// Not in the middle of a character of a text body.
		for i := 0; i < utf8.UTFMax && len(raw) > 0 && !utf8.Valid(raw); i++ {
			raw = raw[:len(raw)-1]
		}
	}
	if utf8.Valid(raw) {
		b.Body = string(raw)
	} else {
		b.Base64, b.Body = true, base64.StdEncoding.EncodeToString(raw)
	}
	return b, nil
}
