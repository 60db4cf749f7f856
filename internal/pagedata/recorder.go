package pagedata

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// Recording holds the network record of every tab the session host has used;
// nil in a dtb process that attaches for one command (the host sets it).
var Recording *Recorder

// DefaultRecordLimit is how many requests, and how many console messages, a
// tab's record keeps unless the host is told otherwise (DTB_HOST_RECORD); the
// oldest go first.
const DefaultRecordLimit = 5000

// BodyLimit caps a body `dtb network --body` prints.
const BodyLimit = 4 << 20

// Recorder keeps, per tab, a connection of its own with the Network domain on,
// so that the requests a page makes between and during commands are known
// with methods, statuses, headers and bodies (the resource-timing path sees
// none of these).
type Recorder struct {
	mu    sync.Mutex
	tabs  map[string]*tabRecord // by target id
	limit int
	// OnDialog, when set, is told of every dialog a recorded tab opens
	// (d) and closes (nil), in order, whether or not a command runs: a
	// dialog a page opens after a command ended is known to the next one.
	// answer answers d over the record's connection, which saw it open.
	OnDialog DialogFunc
}

// DialogFunc is Recorder.OnDialog.
type DialogFunc func(tabID string, d *cdp.Dialog, answer func(answer, text string) error)

// NewRecorder is an empty recorder whose tabs keep limit requests and limit
// console messages each (DefaultRecordLimit when limit <= 0).
func NewRecorder(limit int) *Recorder {
	if limit <= 0 {
		limit = DefaultRecordLimit
	}
	return &Recorder{tabs: map[string]*tabRecord{}, limit: limit}
}

type tabRecord struct {
	id    string        // the tab's target id
	ready chan struct{} // closed once conn is set, or the start failed
	conn  *cdp.Conn
	mu    sync.Mutex
	reqs  []*hostRequest // oldest first, at most limit
	limit int
	byID  map[string]*hostRequest
	since time.Time
	// routed: what a route did to a request, by Network request id.
	routed map[string]string
	// console: the tab's console messages and exceptions from the host's
	// first use on, across documents (at most limit).
	console *collector
}

// hostRequest is a request of a tab's record (a liveRequest's respond and
// end, with the id kept).
type hostRequest struct{ liveRequest }

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
			t = &tabRecord{id: id, ready: make(chan struct{}), byID: map[string]*hostRequest{}, since: time.Now(), limit: r.limit}
			r.tabs[id] = t
			r.mu.Unlock()
			if !t.start(ctx, dial, r.OnDialog) {
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
func (t *tabRecord) start(ctx context.Context, dial func(context.Context) (*cdp.Conn, error), onDialog DialogFunc) bool {
	defer close(t.ready)
	c, err := dial(ctx)
	if err != nil {
		return false
	}
	events, _ := c.Subscribe("", "*")
	// Bodies stay in the browser (its default buffers) until --body asks.
	if _, err := proto.Call(ctx, c.Target(""), network.Enable, network.EnableParams{}); err != nil {
		c.Close()
		return false
	}
	t.conn = c
	// What the record keeps is bounded: a message over 16 MiB (a page that
	// logs a huge string) is read through and dropped, never held.
	c.LimitMessages(16 << 20)
	// The console too: enabling replays what the current document logged
	// before, and every later document's messages follow.
	t.mu.Lock()
	t.console = &collector{byException: map[int]int{}}
	t.mu.Unlock()
	proto.Call(ctx, c.Target(""), log.Enable, proto.Empty{})
	proto.Call(ctx, c.Target(""), runtime.Enable, proto.Empty{})
	if onDialog != nil {
		// Dialogs are Page events. A page command's connections have the
		// domain on already, so this changes nothing in how the browser
		// treats a dialog (it stays open until answered).
		proto.Call(ctx, c.Target(""), page.Enable, page.EnableParams{})
	}
	if Routing != nil {
		// The routes hold from this tab's first request on.
		t.intercept(ctx)
	}
	go t.collect(events, onDialog)
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

func (t *tabRecord) collect(events <-chan cdp.Event, onDialog DialogFunc) {
	for ev := range events {
		if strings.HasPrefix(ev.Method, "Page.") {
			if onDialog == nil {
				continue
			}
			if d, ok := cdp.DialogOpened(ev); ok {
				d.Open = true
				onDialog(t.id, d, func(answer, text string) error {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_, err := cdp.NewPage(t.conn, t.id, "").AnswerDialog(ctx, d, answer, text)
					return err
				})
			} else if ev.Method == page.JavascriptDialogClosed.Method {
				onDialog(t.id, nil, nil)
			}
			continue
		}
		if e, ok := cdp.Decode(fetch.RequestPaused, ev); ok {
			go t.paused(&e) // a delay must not hold the record
			continue
		}
		if strings.HasPrefix(ev.Method, "Runtime.") || strings.HasPrefix(ev.Method, "Log.") {
			t.mu.Lock()
			if t.console != nil {
				t.console.add(ev)
				t.console.bound(t.limit)
			}
			t.mu.Unlock()
			continue
		}
		if !strings.HasPrefix(ev.Method, "Network.") {
			continue
		}
		t.mu.Lock()
		t.apply(ev)
		t.mu.Unlock()
	}
}

func (t *tabRecord) apply(ev cdp.Event) {
	if e, ok := cdp.Decode(network.RequestWillBeSent, ev); ok {
		r := t.byID[string(e.RequestID)]
		var redirects []string
		if r != nil && e.RedirectResponse != nil {
			// A redirect: the same id goes on with the next hop; the hop
			// it ends is remembered in Redirects.
			redirects = append(r.Redirects, r.URL)
			r.respond(e.RedirectResponse)
			r.end(e.Timestamp)
		}
		var url, m string
		var headers map[string]string
		if e.Request != nil {
			url, m, headers = e.Request.URL, e.Request.Method, headerMap(e.Request.Headers)
		}
		n := &hostRequest{liveRequest{Request: Request{ID: string(e.RequestID), URL: url, Method: &m, Type: strings.ToLower(string(e.Type)),
			Source: "host", RequestHeaders: redact(headers), Redirects: redirects, at: msTime(float64(e.WallTime) * 1000)}, start: float64(e.Timestamp)}}
		if e.Initiator != nil {
			n.Initiator = string(e.Initiator.Type)
		}
		n.Routed = t.routed[n.ID]
		n.Time = n.at.Format(timeLayout)
		if r != nil {
			t.drop(r)
		}
		t.byID[n.ID] = n
		t.reqs = append(t.reqs, n)
		if len(t.reqs) > t.limit {
			old := t.reqs[0]
			t.reqs = t.reqs[1:]
			if t.byID[old.ID] == old {
				delete(t.byID, old.ID)
			}
		}
	} else if e, ok := cdp.Decode(network.ResponseReceived, ev); ok {
		if r := t.byID[string(e.RequestID)]; r != nil && e.Response != nil {
			r.respond(e.Response)
			r.ResponseHeaders = redact(headerMap(e.Response.Headers))
			r.MimeType = e.Response.MimeType
			if e.Type != "" {
				r.Type = strings.ToLower(string(e.Type))
			}
		}
	} else if e, ok := cdp.Decode(network.LoadingFinished, ev); ok {
		if r := t.byID[string(e.RequestID)]; r != nil {
			r.end(e.Timestamp)
			size := int(e.EncodedDataLength)
			r.TransferSize = &size
		}
	} else if e, ok := cdp.Decode(network.LoadingFailed, ev); ok {
		if r := t.byID[string(e.RequestID)]; r != nil {
			r.end(e.Timestamp)
			r.Failed = true
			r.Failure = e.ErrorText
			if e.BlockedReason != "" {
				r.Failure += " (blocked: " + string(e.BlockedReason) + ")"
			}
		}
	}
}

// headerMap is a protocol header object as strings.
func headerMap(h network.Headers) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		switch x := v.(type) {
		case string:
			out[k] = x
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

func (t *tabRecord) drop(r *hostRequest) {
	for i, x := range t.reqs {
		if x == r {
			t.reqs = append(t.reqs[:i:i], t.reqs[i+1:]...)
			return
		}
	}
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

// getResponseBody is network.GetResponseBody with the body as text (see
// cdp/methods.go).
var getResponseBody = proto.Command[network.GetResponseBodyParams, struct {
	Body          string `json:"body"`
	Base64Encoded bool   `json:"base64Encoded"`
}]{Method: network.CommandGetResponseBody}

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
	res, err := proto.Call(ctx, t.conn.Target(""), getResponseBody, network.GetResponseBodyParams{RequestID: network.RequestID(id)})
	var tl *cdp.TooLargeError
	if errors.As(err, &tl) {
		return nil, output.TooLarge(tl.Size, 16<<20).With("id", id)
	}
	if err != nil {
		return nil, output.Wrap("no-such-request", err, "the browser has no body for request "+id+" (none yet, a redirect, evicted from its buffer, or of a document the tab has left: the browser drops those bodies)").With("id", id).With("url", req.URL)
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

// consoleRecord is the tab's recorded console messages and when the record
// began; ok is false when the host does not record the tab.
func (r *Recorder) consoleRecord(tabID string) (msgs []ConsoleMessage, since time.Time, ok bool) {
	t := r.record(tabID)
	if t == nil {
		return nil, time.Time{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.console == nil {
		return nil, time.Time{}, false
	}
	return t.console.messages(), t.since, true
}

// clearConsole empties the tab's recorded console messages.
func (r *Recorder) clearConsole(tabID string) {
	if t := r.record(tabID); t != nil {
		t.mu.Lock()
		t.console = &collector{byException: map[int]int{}}
		t.mu.Unlock()
	}
}
