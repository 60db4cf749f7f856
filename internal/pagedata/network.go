package pagedata

import (
	"context"
	_ "embed"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/resources.js
var resourcesJS string

// defaultTimingBuffer is the number of resource timing entries a document
// keeps unless it raises the limit itself (performance.setResourceTimingBufferSize).
const defaultTimingBuffer = 250

// Request is one request of the tab.
type Request struct {
	// ID names a request the session host recorded (dtb network --body ID).
	ID     string  `json:"id,omitempty"`
	URL    string  `json:"url"`
	Method *string `json:"method"` // null when the browser kept no record of it
	Status *int    `json:"status"` // HTTP status; null when unknown or the request failed before a response
	// Type: document, script, link, css, image, fetch, xhr … (the
	// resource timing initiator) or, for requests seen live, the protocol's
	// resource type (document, stylesheet, image, script, fetch, xhr …).
	Type         string  `json:"type"`
	Size         *int    `json:"size"`         // body bytes as transferred; null when unknown
	TransferSize *int    `json:"transferSize"` // with headers; 0 from the cache or when the browser hides it
	DurationMs   float64 `json:"durationMs"`
	Failed       bool    `json:"failed"`            // 4xx, 5xx or a network error
	Failure      string  `json:"failure,omitempty"` // e.g. net::ERR_CONNECTION_REFUSED, or "HTTP 404 (Not Found)"
	Time         string  `json:"time"`              // when it started (RFC 3339, UTC); when it was logged for a failure seen only in the log
	Cached       bool    `json:"cached,omitempty"`
	Protocol     string  `json:"protocol,omitempty"`
	// Source says which record it comes from: timing (the page's resource
	// timing), log (the browser's log of failed loads only), live (seen
	// while dtb watched: --wait, --reload).
	Source string `json:"source"`
	// Hidden: the browser keeps no outcome of this request for the page
	// (cross-origin without Timing-Allow-Origin, and no failure logged: a
	// no-cors 404 is not logged either), so failed:false means "not known
	// to fail". --reload or --watch record it live.
	Hidden bool `json:"hidden,omitempty"`
	// Routed says which route of the session host took the request and
	// what it did ("**/api/*: fulfilled 200").
	Routed string `json:"routed,omitempty"`
	// Recorded by the session host (source "host"): the headers (cookie and
	// authorization values redacted), the response's MIME type, what
	// started the request (parser, script, preflight, other) and the URLs it
	// was redirected from.
	RequestHeaders  map[string]string `json:"requestHeaders,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	MimeType        string            `json:"mimeType,omitempty"`
	Initiator       string            `json:"initiator,omitempty"`
	Redirects       []string          `json:"redirects,omitempty"`

	at time.Time
}

// NetworkOptions filter and extend ReadNetwork.
type NetworkOptions struct {
	Failed bool   // only failed requests
	Filter string // only URLs containing this (or matching it, as a /regexp/)
	// Wait keeps watching this long for new requests (live records).
	Wait time.Duration
	// Reload reloads the tab and records its requests live until load and
	// Wait more; the records before the reload are dropped.
	Reload bool
	Hard   bool // Reload bypassing the cache
}

// NetworkResult is what `dtb network` prints.
type NetworkResult struct {
	Tab      cdp.TabRef `json:"tab"`
	URL      string     `json:"url"`
	Count    int        `json:"count"`
	Failed   int        `json:"failed"` // among the listed requests
	Requests []Request  `json:"requests"`
	// TimingBufferFull: the document holds as many resource timing entries
	// as the browser keeps by default (250); later requests may be missing
	// unless they failed (the log still names those).
	TimingBufferFull bool `json:"timingBufferFull,omitempty"`
	// Hidden counts the listed requests whose outcome the records hide
	// (Request.Hidden): --fail-on-failed cannot judge them.
	Hidden int `json:"hidden,omitempty"`
	// RecordedSince: the list is the session host's record of the tab,
	// kept since the host first used it (every document, up to the record limit
	// requests), not the current document's resource timing.
	RecordedSince string `json:"recordedSince,omitempty"`
	// HAR: the list was also written as HAR 1.2 (--har FILE).
	HAR *HARFile `json:"har,omitempty"`
}

var (
	logStatusRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`status of (\d{3})(?: \(([^)]*)\))?`) })
	logNetErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(net::ERR_[A-Z0-9_]+)`) })
)

// ReadNetwork lists the requests of the tab's current document: its resource
// timing entries (every request that got a response or failed, with status,
// size and duration, up to the buffer's limit) joined with the browser's log
// of failed loads (network errors by name, HTTP errors of any resource), then,
// with o.Wait or o.Reload, the requests seen live with full details.
func ReadNetwork(ctx context.Context, p *cdp.Page, o NetworkOptions) (*NetworkResult, error) {
	match, err := urlMatcher(o.Filter)
	if err != nil {
		return nil, err
	}
	res := &NetworkResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, Requests: []Request{}}
	var reqs []Request
	if t := Recording.record(p.ID); t != nil && !o.Reload {
		if o.Wait > 0 {
			select {
			case <-time.After(o.Wait):
			case <-ctx.Done():
				return nil, output.Wrap("timeout", ctx.Err(), "watching the network")
			}
		}
		// What the current document loaded before the recording began
		// comes from its resource timing, as without the host.
		timing, url, full, err := kept(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, r := range timing {
			if r.at.Before(t.since) {
				reqs = append(reqs, r)
				res.TimingBufferFull = res.TimingBufferFull || full
			}
		}
		reqs, res.URL, res.RecordedSince = append(reqs, t.requests()...), url, t.since.UTC().Format(timeLayout)
	} else if o.Reload {
		live, url, err := recordReload(ctx, p, o)
		if err != nil {
			return nil, err
		}
		reqs, res.URL = live, url
	} else {
		var err error
		reqs, res.URL, res.TimingBufferFull, err = kept(ctx, p)
		if err != nil {
			return nil, err
		}
		if o.Wait > 0 {
			live, err := record(ctx, p, o.Wait, nil)
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, live...)
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].at.Before(reqs[j].at) })
	for _, r := range reqs {
		if (o.Failed && !r.Failed) || !match(r.URL) {
			continue
		}
		if r.Failed {
			res.Failed++
		}
		if r.Source == "timing" && r.Status == nil && !r.Failed {
			r.Hidden = true
			res.Hidden++
		}
		res.Requests = append(res.Requests, r)
	}
	res.Count = len(res.Requests)
	return res, nil
}

// FailOnFailed is the network-failures error when r lists failed requests.
func (r *NetworkResult) FailOnFailed() error {
	var bad []Request
	for _, q := range r.Requests {
		if q.Failed {
			bad = append(bad, q)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	e := output.Errorf("network-failures", "%d request(s) failed; first: %s %s", len(bad), bad[0].URL, bad[0].Failure).
		With("count", len(bad)).With("url", r.URL).With("tab", r.Tab.ID)
	if len(bad) > 10 {
		bad = bad[:10]
	}
	return e.With("requests", bad)
}

// urlMatcher: a /regexp/ or a substring.
func urlMatcher(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return func(string) bool { return true }, nil
	}
	if len(pattern) > 2 && strings.HasPrefix(pattern, "/") && strings.HasSuffix(pattern, "/") {
		re, err := regexp.Compile(pattern[1 : len(pattern)-1])
		if err != nil {
			return nil, output.Usage("--filter: bad regular expression %s: %v", pattern, err)
		}
		return re.MatchString, nil
	}
	return func(u string) bool { return strings.Contains(u, pattern) }, nil
}

// kept is what the browser kept of the document's requests: resource timing
// entries, with the log's failures joined to them (or added when the timing
// has no entry).
func kept(ctx context.Context, p *cdp.Page) ([]Request, string, bool, error) {
	var page struct {
		URL     string `json:"url"`
		Entries []struct {
			URL          string  `json:"url"`
			Initiator    string  `json:"initiator"`
			Status       int     `json:"status"`
			TransferSize int     `json:"transferSize"`
			BodySize     int     `json:"bodySize"`
			DurationMs   float64 `json:"durationMs"`
			Start        float64 `json:"start"`
			Protocol     string  `json:"protocol"`
			Cached       bool    `json:"cached"`
		} `json:"entries"`
		ResourceCount int `json:"resourceCount"`
	}
	raw, err := p.CallJS(ctx, resourcesJS, false)
	if err != nil {
		return nil, "", false, err
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, "", false, output.Errorf("cdp-error", "bad resource timing answer: %v", err)
	}
	reqs := make([]Request, 0, len(page.Entries))
	for _, e := range page.Entries {
		r := Request{URL: e.URL, Type: timingType(e.Initiator), DurationMs: e.DurationMs, Cached: e.Cached, Protocol: e.Protocol, Source: "timing", at: msTime(e.Start)}
		r.Time = r.at.Format(timeLayout)
		if m := methodOf(e.Initiator); m != "" {
			r.Method = &m
		}
		if e.Status > 0 {
			st := e.Status
			r.Status = &st
			r.Failed = st >= 400
			if r.Failed {
				r.Failure = "HTTP " + strconv.Itoa(st)
			}
		}
		// A request that failed without a response has no sizes.
		if e.Status > 0 || e.TransferSize > 0 || e.BodySize > 0 || e.Cached {
			size, transfer := e.BodySize, e.TransferSize
			r.Size, r.TransferSize = &size, &transfer
		}
		reqs = append(reqs, r)
	}
	failures, err := loggedFailures(ctx, p)
	if err != nil {
		return nil, "", false, err
	}
	// Join each logged failure to the first timing entry of its URL that
	// agrees with it (same status, or no status for a network error).
	used := make([]bool, len(reqs))
	for _, f := range failures {
		joined := false
		for i := range reqs {
			r := &reqs[i]
			if used[i] || r.URL != f.URL || !sameOutcome(r, &f) {
				continue
			}
			used[i], joined = true, true
			r.Failed = true
			if f.Failure != "" {
				r.Failure = f.Failure
			}
			break
		}
		if !joined {
			reqs = append(reqs, f)
		}
	}
	return reqs, page.URL, page.ResourceCount >= defaultTimingBuffer, nil
}

func sameOutcome(r, f *Request) bool {
	if f.Status == nil {
		return r.Status == nil
	}
	return r.Status != nil && *r.Status == *f.Status
}

// loggedFailures are the failed loads the browser logged for the document
// (Blink keeps its log entries and replays them when the Log domain is
// enabled on a new session).
func loggedFailures(ctx context.Context, p *cdp.Page) ([]Request, error) {
	events, cancel := cdp.On(p, log.EntryAdded)
	defer cancel()
	if _, err := proto.Call(ctx, p, log.Enable, proto.Empty{}); err != nil {
		return nil, cdp.WrapCDP(ctx, err, "reading the browser's log")
	}
	c := &collector{}
	idle := time.NewTimer(replayIdle)
	defer idle.Stop()
drain:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, p.Ended("the read of its log", nil)
			}
			c.add(ev)
			idle.Reset(replayIdle)
		case <-idle.C:
			break drain
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "reading the browser's log")
		}
	}
	var out []Request
	for _, m := range c.list {
		if m.Source != "network" || m.URL == "" {
			continue
		}
		r := Request{URL: m.URL, Failed: true, Source: "log", Time: m.Time, at: m.at}
		if s := logStatusRE().FindStringSubmatch(m.Text); s != nil {
			st, _ := strconv.Atoi(s[1])
			r.Status = &st
			r.Failure = "HTTP " + s[1]
			if s[2] != "" {
				r.Failure += " (" + s[2] + ")"
			}
		} else if s := logNetErrRE().FindString(m.Text); s != "" {
			r.Failure = s
		} else {
			r.Failure = strings.TrimPrefix(m.Text, "Failed to load resource: ")
		}
		out = append(out, r)
	}
	return out, nil
}

// timingType names a resource timing initiator.
func timingType(initiator string) string {
	switch initiator {
	case "navigation":
		return "document"
	case "xmlhttprequest":
		return "xhr"
	case "img":
		return "image"
	}
	return initiator
}

// methodOf is the method the initiator always uses: elements load with GET;
// fetch, XHR, beacons and navigations may use any method and timing does not
// keep it.
func methodOf(initiator string) string {
	switch initiator {
	case "img", "image", "script", "link", "css", "audio", "video", "track", "input", "embed", "object", "icon":
		return "GET"
	}
	return ""
}

// record watches the tab's requests live for d (or, with until, until it
// closes and then d more).
func record(ctx context.Context, p *cdp.Page, d time.Duration, until <-chan struct{}) ([]Request, error) {
	events, cancel := p.Events("*")
	defer cancel()
	if _, err := proto.Call(ctx, p, network.Enable, cdp.NetworkNoBodies()); err != nil {
		return nil, cdp.WrapCDP(ctx, err, "watching the network")
	}
	return collectLive(ctx, events, d, until)
}

// recordReload reloads the tab while recording and returns the live records
// from the reload on, and the URL after it.
func recordReload(ctx context.Context, p *cdp.Page, o NetworkOptions) ([]Request, string, error) {
	events, cancel := p.Events("*")
	defer cancel()
	if _, err := proto.Call(ctx, p, network.Enable, cdp.NetworkNoBodies()); err != nil {
		return nil, "", cdp.WrapCDP(ctx, err, "watching the network")
	}
	loaded := make(chan struct{})
	var nav *cdp.HistoryResult
	var navErr error
	go func() {
		defer close(loaded)
		nav, navErr = p.Reload(ctx, o.Hard, cdp.WaitLoad)
	}()
	reqs, err := collectLive(ctx, events, o.Wait, loaded)
	<-loaded
	if navErr != nil {
		return nil, "", navErr
	}
	if err != nil {
		return nil, "", err
	}
	return reqs, nav.URL, nil
}

// liveRequest is a request being recorded.
type liveRequest struct {
	Request
	start float64 // monotonic seconds
}

func (r *liveRequest) respond(resp *network.Response) {
	st := int(resp.Status)
	r.Status = &st
	r.Protocol, r.Cached = resp.Protocol, resp.FromDiskCache
	if st >= 400 {
		r.Failed = true
		r.Failure = "HTTP " + strconv.Itoa(st)
		if resp.StatusText != "" {
			r.Failure += " (" + resp.StatusText + ")"
		}
	}
}

func (r *liveRequest) end(ts proto.MonotonicTime) {
	r.DurationMs = float64(int((float64(ts)-r.start)*10000)) / 10
}

// collectLive turns Network events into requests: until closes (nil: at
// once), then d more. Requests still pending at the end are listed without a
// status.
func collectLive(ctx context.Context, events <-chan cdp.Event, d time.Duration, until <-chan struct{}) ([]Request, error) {
	current := map[string]*liveRequest{}
	var order []*liveRequest
	var end <-chan time.Time
	if until == nil {
		end = time.After(d)
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, output.Errorf("torn-down", "the tab went away while watching its requests")
			}
			if e, ok := cdp.Decode(network.RequestWillBeSent, ev); ok {
				if r := current[string(e.RequestID)]; r != nil && e.RedirectResponse != nil {
					// A redirect ends the previous hop; the id goes on.
					r.respond(e.RedirectResponse)
					r.end(e.Timestamp)
				}
				var url, m string
				if e.Request != nil {
					url, m = e.Request.URL, e.Request.Method
				}
				nr := &liveRequest{Request: Request{URL: url, Method: &m, Type: strings.ToLower(string(e.Type)), Source: "live", at: msTime(float64(e.WallTime) * 1000)}, start: float64(e.Timestamp)}
				nr.Time = nr.at.Format(timeLayout)
				current[string(e.RequestID)] = nr
				order = append(order, nr)
			} else if e, ok := cdp.Decode(network.ResponseReceived, ev); ok {
				if r := current[string(e.RequestID)]; r != nil && e.Response != nil {
					r.respond(e.Response)
					if e.Type != "" {
						r.Type = strings.ToLower(string(e.Type))
					}
				}
			} else if e, ok := cdp.Decode(network.LoadingFinished, ev); ok {
				if r := current[string(e.RequestID)]; r != nil {
					r.end(e.Timestamp)
					size := int(e.EncodedDataLength)
					r.TransferSize = &size
				}
			} else if e, ok := cdp.Decode(network.LoadingFailed, ev); ok {
				if r := current[string(e.RequestID)]; r != nil {
					r.end(e.Timestamp)
					r.Failed = true
					r.Failure = e.ErrorText
					if e.BlockedReason != "" {
						r.Failure += " (blocked: " + string(e.BlockedReason) + ")"
					}
				}
			}
		case <-until:
			until = nil
			end = time.After(d)
		case <-end:
			out := make([]Request, 0, len(order))
			for _, r := range order {
				out = append(out, r.Request)
			}
			return out, nil
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "watching the network")
		}
	}
}

// CheckFilter validates a --filter pattern before any browser work.
func CheckFilter(pattern string) error {
	_, err := urlMatcher(pattern)
	return err
}
