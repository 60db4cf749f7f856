package pagedata

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"

	"github.com/dtb-cli/dtb/internal/output"
)

// Route is a rule the session host applies to the requests of every tab it
// records: answer with Status, Headers and Body, fail with Abort, or let the
// request go on after Delay.
type Route struct {
	// Pattern is matched against the whole URL: * is any run of characters,
	// ? one character, \ escapes (the protocol's own URL patterns).
	Pattern string            `json:"pattern"`
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"-"`
	// BodyBytes is the size of Body (the body itself is not shown).
	BodyBytes int    `json:"bodyBytes,omitempty"`
	Abort     string `json:"abort,omitempty"` // a network error: Failed, Aborted, ConnectionRefused …
	DelayMs   int64  `json:"delayMs,omitempty"`
	// Hits counts the requests the route answered.
	Hits  int       `json:"hits"`
	Added time.Time `json:"added"`
}

// fulfills: the route answers the request itself (a status, headers or a
// body given); else, without Abort, the request goes on (after the delay).
func (r *Route) fulfills() bool { return r.Status != 0 || r.Body != nil || len(r.Headers) > 0 }

// Action says what a route does, for the network record.
func (r *Route) Action() string {
	var parts []string
	if r.DelayMs > 0 {
		parts = append(parts, fmt.Sprintf("delayed %dms", r.DelayMs))
	}
	switch {
	case r.Abort != "":
		parts = append(parts, "aborted ("+r.Abort+")")
	case r.fulfills():
		parts = append(parts, fmt.Sprintf("fulfilled %d", r.status()))
	default:
		parts = append(parts, "continued")
	}
	return strings.Join(parts, ", ")
}

func (r *Route) status() int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

// abortReasons are the network errors --abort takes (the protocol's).
var abortReasons = []network.ErrorReason{
	network.ErrorReasonFailed, network.ErrorReasonAborted, network.ErrorReasonTimedOut, network.ErrorReasonAccessDenied,
	network.ErrorReasonConnectionClosed, network.ErrorReasonConnectionReset, network.ErrorReasonConnectionRefused,
	network.ErrorReasonConnectionAborted, network.ErrorReasonConnectionFailed, network.ErrorReasonNameNotResolved,
	network.ErrorReasonInternetDisconnected, network.ErrorReasonAddressUnreachable, network.ErrorReasonBlockedByClient,
	network.ErrorReasonBlockedByResponse,
}

// AbortReason is the protocol's name of an --abort reason ("" → Failed).
func AbortReason(s string) (string, error) {
	if s == "" {
		return string(network.ErrorReasonFailed), nil
	}
	names := make([]string, len(abortReasons))
	for i, r := range abortReasons {
		if strings.EqualFold(string(r), s) {
			return string(r), nil
		}
		names[i] = string(r)
	}
	return "", output.Usage("--abort takes one of %s, not %q", strings.Join(names, ", "), s)
}

// Router holds the session host's routes, newest first.
type Router struct {
	mu     sync.Mutex
	routes []*Route
	// OnChange, when set, is told the routes after every change (the host
	// shows them in its info file, which dtb status reads).
	OnChange func([]Route)
}

// Routing is the session host's router; nil in a dtb process that attaches
// for one command (routes live in the host).
var Routing *Router

// ErrNoHost is the error of a routing command outside the session host.
func ErrNoHost() error {
	return output.Errorf("no-host", "routes live in the session host, which this command did not go through (DTB_HOST=off, --cdp, or the host was unavailable); run it with the session's own browser and the host on")
}

// Add puts r first, replacing a route of the same pattern, and applies the
// routes to the recorded tabs within ctx. failed counts the tabs they could
// not be applied to.
func (rt *Router) Add(ctx context.Context, r Route) (list []Route, failed int) {
	rt.mu.Lock()
	r.Added = time.Now().UTC().Truncate(time.Millisecond)
	kept := []*Route{&r}
	for _, x := range rt.routes {
		if x.Pattern != r.Pattern {
			kept = append(kept, x)
		}
	}
	rt.routes = kept
	list = rt.listLocked()
	rt.mu.Unlock()
	return list, rt.changed(ctx, list)
}

// Remove drops the route of pattern ("" drops all) and says how many went;
// failed as for Add.
func (rt *Router) Remove(ctx context.Context, pattern string) (n int, list []Route, failed int) {
	rt.mu.Lock()
	var kept []*Route
	for _, x := range rt.routes {
		if pattern != "" && x.Pattern != pattern {
			kept = append(kept, x)
		}
	}
	n = len(rt.routes) - len(kept)
	rt.routes = kept
	list = rt.listLocked()
	rt.mu.Unlock()
	return n, list, rt.changed(ctx, list)
}

// List is a copy of the routes, newest first.
func (rt *Router) List() []Route {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.listLocked()
}

func (rt *Router) listLocked() []Route {
	out := make([]Route, len(rt.routes))
	for i, r := range rt.routes {
		out[i] = *r
	}
	return out
}

func (rt *Router) changed(ctx context.Context, list []Route) int {
	if rt.OnChange != nil {
		rt.OnChange(list)
	}
	return Recording.applyRoutes(ctx)
}

// match is the newest route whose pattern matches url (counted as a hit),
// or nil.
func (rt *Router) match(url string) *Route {
	if rt == nil {
		return nil
	}
	rt.mu.Lock()
	var hit *Route
	for _, r := range rt.routes {
		if globMatch(r.Pattern, url) {
			r.Hits++
			c := *r
			hit = &c
			break
		}
	}
	var list []Route
	if hit != nil {
		list = rt.listLocked()
	}
	rt.mu.Unlock()
	if hit != nil && rt.OnChange != nil {
		rt.OnChange(list) // the hits show in dtb status
	}
	return hit
}

// patterns are the protocol's request patterns of the routes (nil: none).
func (rt *Router) patterns() []*fetch.RequestPattern {
	if rt == nil {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []*fetch.RequestPattern
	for _, r := range rt.routes {
		out = append(out, &fetch.RequestPattern{URLPattern: r.Pattern, RequestStage: fetch.RequestStageRequest})
	}
	return out
}

// globMatch matches s against a protocol URL pattern: * any run, ? one
// character, \ escapes the next.
func globMatch(pattern, s string) bool {
	p, str := []rune(pattern), []rune(s)
	// Iterative matching with one backtrack point per star.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(str) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				star, mark = pi, si
				pi++
				continue
			case c == '?':
				pi++
				si++
				continue
			case c == '\\' && pi+1 < len(p):
				if p[pi+1] == str[si] {
					pi += 2
					si++
					continue
				}
			case c == str[si]:
				pi++
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		pi, mark = star+1, mark+1
		si = mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// applyRoutes turns interception on (with the routes' patterns) or off on
// every recorded tab, within ctx; it returns how many tabs failed.
func (r *Recorder) applyRoutes(ctx context.Context) (failed int) {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	var tabs []*tabRecord
	for _, t := range r.tabs {
		tabs = append(tabs, t)
	}
	r.mu.Unlock()
	for _, t := range tabs {
		select {
		case <-t.ready:
			if t.alive() && t.intercept(ctx) != nil {
				failed++
			}
		default: // still starting: it applies the routes as it starts
		}
	}
	return failed
}

// intercept turns the Fetch domain on the record's connection on with the
// routes' patterns, or off when there is no route.
func (t *tabRecord) intercept(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pats := Routing.patterns()
	if len(pats) == 0 {
		_, err := proto.Call(ctx, t.conn.Target(""), fetch.Disable, proto.Empty{})
		return err
	}
	_, err := proto.Call(ctx, t.conn.Target(""), fetch.Enable, fetch.EnableParams{Patterns: pats})
	return err
}

// paused answers a request the Fetch domain paused: by the newest route
// that matches its URL (marked in the record), else it goes on.
func (t *tabRecord) paused(e *fetch.EventRequestPaused) {
	url := ""
	if e.Request != nil {
		url = e.Request.URL
	}
	target := t.conn.Target("")
	r := Routing.match(url)
	if r != nil {
		t.mark(string(e.NetworkID), r)
		// The answer's own deadline starts after the delay.
		time.Sleep(time.Duration(r.DelayMs) * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if r == nil {
		proto.Call(ctx, target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	switch {
	case r.Abort != "":
		proto.Call(ctx, target, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReason(r.Abort)})
	case r.fulfills():
		var headers []*fetch.HeaderEntry
		names := make([]string, 0, len(r.Headers))
		for k := range r.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			headers = append(headers, &fetch.HeaderEntry{Name: k, Value: r.Headers[k]})
		}
		if r.Body != nil && r.Headers["Content-Length"] == "" {
			headers = append(headers, &fetch.HeaderEntry{Name: "Content-Length", Value: strconv.Itoa(len(r.Body))})
		}
		proto.Call(ctx, target, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: int64(r.status()), ResponseHeaders: headers, Body: r.Body})
	default:
		proto.Call(ctx, target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
	}
}

// mark records in the tab's record that route r took request id (a
// Network request id; the record may see the request later than this).
func (t *tabRecord) mark(id string, r *Route) {
	if id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.routed == nil {
		t.routed = map[string]string{}
	}
	t.routed[id] = r.Pattern + ": " + r.Action()
	if q := t.byID[id]; q != nil {
		q.Routed = t.routed[id]
	}
}

// Routes is what dtb route and dtb unroute print.
type Routes struct {
	Routes  []Route `json:"routes"`
	Added   *Route  `json:"added,omitempty"`
	Removed *int    `json:"removed,omitempty"`
}
