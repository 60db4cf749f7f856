package cdp

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/dtb-cli/dtb/internal/output"
)

// WrapCDP maps a failed CDP call to a dtb error (for packages built on Page).
func WrapCDP(ctx context.Context, err error, what string) error { return wrapCDP(ctx, err, what) }

// NotOwned is the error for a tab dtb must not navigate because it did not
// open it.
func NotOwned(p *Page) *output.Error {
	e := output.Errorf("not-owned", "tab %s was not opened by dtb; dtb navigates only its own tabs (open a new tab instead)", TabName(p.ID, p.Alias)).With("tab", p.ID)
	if p.Alias != "" {
		e.With("alias", p.Alias)
	}
	return e
}

// HistoryResult is what back, forward and reload print.
type HistoryResult struct {
	Tab    TabRef `json:"tab"`
	Action string `json:"action"` // back, forward, reload
	From   string `json:"from"`   // the URL before
	URL    string `json:"url"`
	Title  string `json:"title"`
	Status *int   `json:"status"` // the document's HTTP status; null when unknown
	// SameDocument: the entry belonged to the same document (pushState or a
	// fragment): no load happened.
	SameDocument bool `json:"sameDocument,omitempty"`
	// BackForwardCache: the page came back from the back/forward cache (no
	// load event: it was never unloaded).
	BackForwardCache bool   `json:"backForwardCache,omitempty"`
	CanGoBack        bool   `json:"canGoBack"`
	CanGoForward     bool   `json:"canGoForward"`
	Timing           Timing `json:"timing"`
}

// GoHistory moves the tab delta entries through its session history (-1 back,
// +1 forward) and waits as Navigate does. No entry there is no-history-entry.
func (p *Page) GoHistory(ctx context.Context, delta int, wait WaitMode) (*HistoryResult, error) {
	action := "forward"
	if delta < 0 {
		action = "back"
	}
	h, err := proto.Call(ctx, p, page.GetNavigationHistory, proto.Empty{})
	if err != nil {
		return nil, wrapCDP(ctx, err, "reading the tab's history")
	}
	to := int(h.CurrentIndex) + delta
	if to < 0 || to >= len(h.Entries) {
		where := "before"
		if delta > 0 {
			where = "after"
		}
		return nil, output.Errorf("no-history-entry", "the tab has no history entry %s the current one; nothing to go %s to", where, action).
			With("tab", p.ID).With("index", h.CurrentIndex).With("entries", len(h.Entries))
	}
	return p.historyNav(ctx, action, h.Entries[h.CurrentIndex].URL, wait, func() error {
		_, err := proto.Call(ctx, p, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[to].ID})
		return err
	})
}

// Reload reloads the tab (hard: bypassing the cache) and waits as Navigate does.
func (p *Page) Reload(ctx context.Context, hard bool, wait WaitMode) (*HistoryResult, error) {
	var from string
	if raw, err := p.Evaluate(ctx, "location.href", false); err == nil {
		json.Unmarshal(raw, &from)
	}
	return p.historyNav(ctx, "reload", from, wait, func() error {
		_, err := proto.Call(ctx, p, page.Reload, page.ReloadParams{IgnoreCache: &hard})
		return err
	})
}

// historyNav runs go (a history navigation or a reload) and waits for the
// new document's load (or DOMContentLoaded), a back/forward cache restore or
// a same-document move of the main frame, whichever the navigation is.
func (p *Page) historyNav(ctx context.Context, action, from string, wait WaitMode, goFn func() error) (*HistoryResult, error) {
	start := time.Now()
	events, stop := p.Events("*")
	defer stop()
	if _, err := proto.Call(ctx, p, page.Enable, page.EnableParams{}); err != nil {
		return nil, wrapCDP(ctx, err, "preparing the navigation")
	}
	loadEvent := page.LoadEventFired.Method
	if wait == WaitDOMContentLoaded {
		loadEvent = page.DomContentEventFired.Method
	}
	if err := goFn(); err != nil {
		var pe *ProtocolError
		if asProtocol(err, &pe) {
			return nil, output.Wrap("navigation-failed", err, action+" failed").With("tab", p.ID)
		}
		return nil, wrapCDP(ctx, err, action)
	}
	started := time.Now()
	res := &HistoryResult{Tab: TabRef{ID: p.ID, Alias: p.Alias}, Action: action, From: from}
	committed := false
wait:
	for wait != WaitNone {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, p.Ended(action, nil)
			}
			switch ev.Method {
			case page.FrameNavigated.Method:
				var e struct {
					Frame struct {
						ID       string `json:"id"`
						ParentID string `json:"parentId"`
					} `json:"frame"`
					Type string `json:"type"`
				}
				json.Unmarshal(ev.Params, &e)
				if e.Frame.ParentID == "" && e.Frame.ID == p.ID {
					committed = true
					if e.Type == "BackForwardCacheRestore" {
						res.BackForwardCache = true
						break wait
					}
				}
			case page.NavigatedWithinDocument.Method:
				var e struct {
					FrameID string `json:"frameId"`
				}
				json.Unmarshal(ev.Params, &e)
				if e.FrameID == p.ID && !committed {
					res.SameDocument = true
					break wait
				}
			case loadEvent:
				if committed {
					break wait
				}
			}
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "waiting for "+string(wait)+" after "+action).With("tab", p.ID)
		}
	}
	waited := time.Now()
	var info struct {
		URL    string `json:"url"`
		Title  string `json:"title"`
		Status *int   `json:"status"`
	}
	if raw, err := p.CallJS(ctx, pageInfoJS, false); err == nil {
		json.Unmarshal(raw, &info)
	}
	res.URL, res.Title, res.Status = info.URL, info.Title, info.Status
	if strings.HasPrefix(res.URL, "chrome-error://") {
		return nil, output.Errorf("navigation-failed", "%s failed: the browser shows its error page", action).With("tab", p.ID).With("from", from)
	}
	if h, err := proto.Call(ctx, p, page.GetNavigationHistory, proto.Empty{}); err == nil {
		res.CanGoBack = h.CurrentIndex > 0
		res.CanGoForward = int(h.CurrentIndex) < len(h.Entries)-1
	}
	res.Timing = Timing{NavigateMs: started.Sub(start).Milliseconds(), WaitMs: waited.Sub(started).Milliseconds(), TotalMs: time.Since(start).Milliseconds()}
	return res, nil
}
