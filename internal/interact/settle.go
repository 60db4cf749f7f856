package interact

import (
	"context"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// navWatch watches the tab around an action: navigations of the main frame
// that start, commit or stay in the document, the fetch/XHR requests the action
// starts, then how long the DOM takes to go quiet.
type navWatch struct {
	p       *Page
	events  <-chan cdp.Event
	cancel  func()
	err     error
	enabled bool
	active  map[string]any
}

// watch starts watching: Page.enable so that navigation events flow and
// Network.enable (no body buffering) so that requests do (EnablePageNetwork).
// A page whose Network domain cannot be enabled is watched without request
// tracking.
func (p *Page) watch(ctx context.Context) *navWatch {
	ch, cancel := p.tab.Events("*")
	w := &navWatch{p: p, events: ch, cancel: cancel}
	w.err, _ = p.tab.EnablePageNetwork(ctx)
	w.enabled = w.err == nil
	return w
}

// tracked says whether a request type counts as the page still working: what
// an app awaits after an action. Images, scripts and styles of a new document
// do not hold the settle, nor do streams that never end (EventSource,
// WebSocket).
func tracked(typ string) bool { return typ == "Fetch" || typ == "XHR" }

// ready reports whether the watch is on before input is sent.
func (w *navWatch) ready(ctx context.Context) error {
	if w.err != nil {
		return wrapCDP(ctx, w.err)
	}
	return nil
}

func (w *navWatch) stop() { w.cancel() }

type quietRes struct {
	Quiet   bool           `json:"quiet"`
	QuietMs int            `json:"quietMs"`
	URL     string         `json:"url"`
	Active  map[string]any `json:"active"`
}

// settle waits, at most s.Cap, for the DOM to stay unchanged for s.Quiet (or,
// with s.Frames, across that many animation frames), for a navigation that
// started to commit and for the fetch/XHR requests the action started to end,
// and reports what happened.
func (w *navWatch) settle(ctx context.Context, s Settle, start time.Time) *After {
	after := &After{}
	if s.Cap <= 0 {
		s.Cap = DefaultSettle.Cap
	}
	deadline := time.Now().Add(s.Cap)
	actEnd := time.Now()
	cctx, cancel := context.WithDeadline(ctx, deadline.Add(100*time.Millisecond))
	defer cancel()
	type quietMsg struct {
		gen int
		q   *quietRes
	}
	quietDone := make(chan quietMsg, 4)
	gen := 0
	runQuiet := func() {
		gen++
		g := gen
		go func() {
			// cctx ends when settle returns: no send outlives it.
			send := func(q *quietRes) {
				select {
				case quietDone <- quietMsg{g, q}:
				case <-cctx.Done():
				}
			}
			top, err := w.p.topFrame(cctx)
			if err != nil {
				send(nil)
				return
			}
			var q quietRes
			left := time.Until(deadline)
			if left < 0 {
				left = 0
			}
			err = w.p.callValue(cctx, top, "", map[string]any{"op": "quiet", "ms": s.Quiet.Milliseconds(), "cap": left.Milliseconds(), "frames": s.Frames}, &q)
			if err != nil {
				send(nil)
				return
			}
			send(&q)
		}()
	}
	runQuiet()
	quieted := false
	requested := false
	// Fetch/XHR requests started since the watch began and not yet finished.
	// When the last one ends, its answer may still change the DOM: quiet is
	// measured again.
	inflight := map[network.RequestID]bool{}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		if quieted && (!requested || after.Committed) && len(inflight) == 0 {
			break
		}
		select {
		case ev, ok := <-w.events:
			if !ok {
				after.Ms = time.Since(start).Milliseconds()
				return after
			}
			switch ev.Method {
			case network.RequestWillBeSent.Method:
				e, _ := cdp.Decode(network.RequestWillBeSent, ev)
				if tracked(string(e.Type)) {
					inflight[e.RequestID] = true
				}
			case network.LoadingFinished.Method, network.LoadingFailed.Method:
				var id network.RequestID
				if e, ok := cdp.Decode(network.LoadingFinished, ev); ok {
					id = e.RequestID
				} else if e, ok := cdp.Decode(network.LoadingFailed, ev); ok {
					id = e.RequestID
				}
				if inflight[id] {
					delete(inflight, id)
					// Measured again even when a measure is running: that
					// one may end before the answer's handler runs.
					if len(inflight) == 0 {
						quieted = false
						runQuiet()
					}
				}
			case page.FrameRequestedNavigation.Method, page.FrameStartedNavigating.Method:
				// A requested navigation has no type; a started one may stay
				// in the document.
				var frameID proto.FrameID
				var url string
				var sameDocument bool
				if e, ok := cdp.Decode(page.FrameRequestedNavigation, ev); ok {
					frameID, url = e.FrameID, e.URL
				} else if e, ok := cdp.Decode(page.FrameStartedNavigating, ev); ok {
					frameID, url = e.FrameID, e.URL
					sameDocument = e.NavigationType == page.FrameStartedNavigatingNavigationTypeSameDocument
				}
				if string(frameID) == w.p.tabID && !sameDocument {
					requested = true
					after.Navigated = true
					if url != "" && after.URL == "" {
						after.URL = url
					}
				}
			case page.FrameNavigated.Method:
				e, _ := cdp.Decode(page.FrameNavigated, ev)
				f := e.Frame
				if f == nil {
					f = &proto.Frame{}
				}
				if f.ParentID == "" && (string(f.ID) == w.p.tabID || w.p.tabID == "") {
					after.Navigated, after.Committed = true, true
					after.URL = f.URL
					w.p.top = nil
					// Measure the new document's quiet with what is left.
					quieted = false
					runQuiet()
				}
			case page.NavigatedWithinDocument.Method:
				e, _ := cdp.Decode(page.NavigatedWithinDocument, ev)
				if string(e.FrameID) == w.p.tabID {
					after.SameDocument = true
					after.URL = e.URL
				}
			}
		case m := <-quietDone:
			if m.gen != gen {
				continue
			}
			q := m.q
			quieted = true
			if q != nil {
				after.Quiet = q.Quiet
				after.QuietMs = int(time.Since(actEnd).Milliseconds()) - int(s.Quiet.Milliseconds())
				if q.Quiet {
					after.QuietMs = q.QuietMs
					if after.Committed {
						after.QuietMs = int(time.Since(actEnd).Milliseconds()) - int(s.Quiet.Milliseconds())
					}
				}
				if after.QuietMs < 0 {
					after.QuietMs = 0
				}
				if q.URL != "" {
					after.URL = q.URL
				}
				w.active = q.Active
			} else if requested && !after.Committed {
				// The old document went away: wait for the commit.
				continue
			}
		case <-timer.C:
			after.Ms = time.Since(start).Milliseconds()
			if after.QuietMs == 0 && !after.Quiet {
				after.QuietMs = int(s.Cap.Milliseconds())
			}
			return after
		case <-ctx.Done():
			after.Ms = time.Since(start).Milliseconds()
			return after
		}
	}
	after.Ms = time.Since(start).Milliseconds()
	return after
}
