package cdp

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/pageinfo.js
var pageInfoJS string

// WaitMode is what Navigate waits for.
type WaitMode string

// Wait modes.
const (
	WaitLoad             WaitMode = "load"
	WaitDOMContentLoaded WaitMode = "domcontentloaded"
	WaitNone             WaitMode = "none"
)

// ParseWait validates a --wait value.
func ParseWait(s string) (WaitMode, error) {
	switch WaitMode(strings.ToLower(s)) {
	case "", WaitLoad:
		return WaitLoad, nil
	case WaitDOMContentLoaded:
		return WaitDOMContentLoaded, nil
	case WaitNone:
		return WaitNone, nil
	}
	return "", output.Usage("--wait must be load, domcontentloaded or none, not %q", s)
}

// Timing of a navigation, in milliseconds.
type Timing struct {
	NavigateMs int64 `json:"navigateMs"` // until the navigation committed
	WaitMs     int64 `json:"waitMs"`     // waiting for load / DOMContentLoaded
	TotalMs    int64 `json:"totalMs"`
}

// Navigation is the outcome of Navigate.
type Navigation struct {
	URL      string `json:"url"`
	Title    string `json:"title"`
	Status   *int   `json:"status"` // HTTP status of the main document; null when unknown (file:, about:, data:)
	MimeType string `json:"mimeType,omitempty"`
	Timing   Timing `json:"timing"`
}

// NormalizeURL adds a scheme to a URL typed without one: http for localhost and
// 127.0.0.1 (and [::1]), https otherwise.
func NormalizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return raw
	}
	if i := strings.Index(raw, ":"); i > 0 {
		scheme := strings.ToLower(raw[:i])
		switch scheme {
		case "http", "https", "about", "data", "file", "chrome", "javascript", "blob", "view-source", "ws", "wss":
			return raw
		}
	}
	host := raw
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = host[i+1:]
	}
	hn := host
	if u, err := url.Parse("http://" + host); err == nil {
		hn = u.Hostname()
	}
	if hn == "localhost" || hn == "127.0.0.1" || hn == "::1" || strings.HasSuffix(hn, ".localhost") {
		return "http://" + raw
	}
	return "https://" + raw
}

// Navigate loads url in the tab and waits as asked. A DNS, connection or other
// network failure is "navigation-failed" carrying Chrome's net error; an HTTP
// error status is a successful navigation that reports the status.
func (p *Page) Navigate(ctx context.Context, rawURL string, wait WaitMode) (*Navigation, error) {
	start := time.Now()
	loadEvent := page.LoadEventFired.Method
	if wait == WaitDOMContentLoaded {
		loadEvent = page.DomContentEventFired.Method
	}
	loaded, stopLoad := p.Events(loadEvent)
	defer stopLoad()
	responses, stopResp := On(p, network.ResponseReceived)
	defer stopResp()
	if err := cmp.Or(p.EnablePageNetwork(ctx)); err != nil {
		return nil, wrapCDP(ctx, err, "preparing the navigation")
	}
	nav, err := proto.Call(ctx, p, page.Navigate, page.NavigateParams{URL: rawURL})
	if err != nil {
		var pe *ProtocolError
		if asProtocol(err, &pe) {
			return nil, output.Wrap("navigation-failed", err, "cannot navigate to "+rawURL).With("url", rawURL)
		}
		if ctx.Err() != nil {
			// The server never answered: the navigation is still pending,
			// and the browser holds every later command to the tab until it
			// commits. Stopped, the tab stays on its page and answers again.
			p.StopLoading(ctx)
			return nil, output.Wrap("timeout", ctx.Err(), "the server of "+rawURL+" did not answer within --timeout; dtb stopped the load (the tab stays on its previous page)").
				With("url", rawURL).With("stopped", true)
		}
		return nil, wrapCDP(ctx, err, "navigating")
	}
	committed := time.Now()
	if nav.ErrorText != "" && nav.ErrorText != "net::ERR_HTTP_RESPONSE_CODE_FAILURE" {
		return nil, output.Errorf("navigation-failed", "navigation to %s failed: %s", rawURL, nav.ErrorText).
			With("url", rawURL).With("netError", nav.ErrorText)
	}
	if nav.LoaderID != "" && wait != WaitNone {
	waitLoop:
		for {
			select {
			case _, ok := <-loaded:
				if !ok {
					return nil, p.Ended("the load of "+rawURL, nil)
				}
				break waitLoop
			case <-ctx.Done():
				return nil, output.Wrap("timeout", ctx.Err(), "waiting for "+string(wait)+" of "+rawURL).With("url", rawURL)
			}
		}
	}
	waited := time.Now()
	res := &Navigation{}
	// The main document's response, matched by loader.
drain:
	for {
		select {
		case ev, ok := <-responses:
			if !ok {
				break drain
			}
			if r, ok := Decode(network.ResponseReceived, ev); ok && r.Type == network.ResourceTypeDocument && r.LoaderID == nav.LoaderID && r.Response != nil {
				st := int(r.Response.Status)
				res.Status = &st
				res.MimeType = r.Response.MimeType
				res.URL = r.Response.URL
			}
		default:
			break drain
		}
	}
	var info struct {
		URL    string `json:"url"`
		Title  string `json:"title"`
		Status *int   `json:"status"`
	}
	if raw, err := p.CallJS(ctx, pageInfoJS, false); err == nil {
		json.Unmarshal(raw, &info)
	}
	if info.URL != "" {
		res.URL = info.URL
	}
	if res.URL == "" {
		res.URL = rawURL
	}
	res.Title = info.Title
	if res.Status == nil {
		res.Status = info.Status
	}
	end := time.Now()
	res.Timing = Timing{NavigateMs: committed.Sub(start).Milliseconds(), WaitMs: waited.Sub(committed).Milliseconds(), TotalMs: end.Sub(start).Milliseconds()}
	return res, nil
}

func asProtocol(err error, target **ProtocolError) bool {
	for e := err; e != nil; {
		if pe, ok := e.(*ProtocolError); ok {
			*target = pe
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// wrapCDP maps a failed CDP call to a dtb error.
func wrapCDP(ctx context.Context, err error, what string) error {
	if _, ok := err.(*output.Error); ok {
		return err
	}
	if ctx.Err() != nil {
		return output.Wrap("timeout", ctx.Err(), what)
	}
	return output.Wrap("cdp-error", err, what)
}

// StopLoading stops the tab's pending navigation and loads, as a browser's
// stop button (not waited for: sent even when ctx has ended).
func (p *Page) StopLoading(ctx context.Context) {
	Post(context.WithoutCancel(ctx), p, page.StopLoading, proto.Empty{})
}

// UnstuckByTerminate reports whether a tab that does not answer was held by
// a running script: once it is terminated, the tab answers within wait.
// Runtime.terminateExecution ends the script running now, or else the next
// one to start: it is meant only for a tab whose main thread is held by one.
func (p *Page) UnstuckByTerminate(ctx context.Context, wait time.Duration) bool {
	Post(context.WithoutCancel(ctx), p, runtime.TerminateExecution, proto.Empty{})
	return p.Responsive(context.WithoutCancel(ctx), wait)
}

// UnstuckByStop reports whether a tab that does not answer was held by a
// pending navigation: once its load is stopped, it answers within wait.
// The browser holds a tab's commands while a navigation it started waits for
// a server that never answers; a busy script or a dialog is not helped.
func (p *Page) UnstuckByStop(ctx context.Context, wait time.Duration) bool {
	p.StopLoading(ctx)
	return p.Responsive(context.WithoutCancel(ctx), wait)
}
