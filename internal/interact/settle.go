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
	p      *Page
	events <-chan cdp.Event
	pushed func() int64 // events read for the watch so far
	taken  int64        // events taken from events
	cancel func()
	// handedOff: a settle went on in the background, which ends the watch;
	// glanced: what the page said last in the command (the handed-off
	// settle's call, or the settle's last measure).
	handedOff bool
	glanced   *quietRes
	// seen: what the action's last call to the top document, made after its
	// last input, read there (a read-back); the quick end of a settle
	// handed to the host needs no call of its own then.
	seen    *quietRes
	err     error
	enabled bool
	active  map[string]any
}

// watch starts watching: Page.enable so that navigation events flow and
// Network.enable (no body buffering) so that requests do (EnablePageNetwork).
// A page whose Network domain cannot be enabled is watched without request
// tracking.
func (p *Page) watch(ctx context.Context) *navWatch {
	ch, pushed, cancel := p.tab.EventsCounted("*")
	w := &navWatch{p: p, events: ch, pushed: pushed, cancel: cancel}
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

func (w *navWatch) stop() {
	if !w.handedOff {
		w.cancel()
	}
}

// browserClicks counts a document's clicks whose effect the browser reports
// in its own time: on file inputs (a chooser) and download links.
type browserClicks struct {
	Files     int `json:"files"`
	Downloads int `json:"downloads"`
}

type quietRes struct {
	// Clicks: the clicks that reached a file input or a download link of the
	// document so far (browserClicks; nil: not counted).
	Clicks  *browserClicks `json:"clicks"`
	Quiet   bool           `json:"quiet"`
	QuietMs int            `json:"quietMs"`
	URL     string         `json:"url"`
	Active  map[string]any `json:"active"`
}

// settle waits, at most s.Cap, for the DOM to stay unchanged for s.Quiet (or,
// with s.Frames, across that many animation frames), for a navigation that
// started to commit and for the fetch/XHR requests the action started to end,
// and reports what happened.
//
// On a connection the session host keeps, the default settle (s.Frames > 0)
// returns as soon as the action is known to have started no navigation and
// no request (what a caller outside the page could wait for); the rest of
// the wait, the page's own follow-up work, goes on in the host, which holds
// the tab's connection until it ends, so the next command on the tab starts
// only then (see cdp.Page.Hold). The answer then says settling.
func (w *navWatch) settle(ctx context.Context, s Settle, start time.Time) *After {
	if s.Cap <= 0 {
		s.Cap = DefaultSettle.Cap
	}
	r := &settleRun{w: w, s: s, start: start, actEnd: time.Now(), after: &After{},
		inflight: map[network.RequestID]bool{}, quietDone: make(chan quietMsg, 4)}
	r.deadline = r.actEnd.Add(s.Cap)
	if s.Frames > 0 && w.enabled && w.p.tab.Kept() {
		if after, ok := r.handOff(ctx); ok {
			return after
		}
	}
	cctx, cancel := context.WithDeadline(ctx, r.deadline.Add(100*time.Millisecond))
	defer cancel()
	return r.run(cctx, ctx, nil)
}

// settleRun is one settle: what it has seen of the tab so far.
type settleRun struct {
	w             *navWatch
	s             Settle
	start, actEnd time.Time
	deadline      time.Time
	after         *After
	quieted       bool
	requested     bool
	dialog        bool // a dialog opened (only a handed-off settle looks)
	newDoc        bool // a new document committed: its frame is resolved anew
	remeasure     bool // a measure is due (a new document, the last request ended)
	// Fetch/XHR requests started since the watch began and not yet
	// finished. When the last one ends, its answer may still change the DOM:
	// quiet is measured again.
	inflight  map[network.RequestID]bool
	quietDone chan quietMsg
	gen       int
}

type quietMsg struct {
	gen int
	q   *quietRes
}

// handOff is the settle's quick end on a kept connection: one call to the
// page, after which every event the action caused up to its answer has
// arrived. With no navigation and no request among them the answer is the
// action's, and the settle goes on in the background; false, and the settle
// runs as before, otherwise.
func (r *settleRun) handOff(ctx context.Context) (*After, bool) {
	w := r.w
	top, err := w.p.topFrame(ctx)
	if err != nil {
		return nil, false
	}
	var info quietRes
	if w.seen != nil {
		info = *w.seen
	} else if err := w.p.callValue(ctx, top, "", map[string]any{"op": "glance"}, &info); err != nil {
		return nil, false
	}
	if !w.drain(r.handle) {
		return nil, false
	}
	if r.requested || r.after.Navigated || len(r.inflight) > 0 {
		return nil, false
	}
	answer := *r.after
	if answer.URL == "" {
		answer.URL = info.URL
	}
	answer.Settling = true
	w.active = info.Active
	w.glanced = &info
	answer.Ms = time.Since(r.start).Milliseconds()
	// The background settle has its own frame: the command's Page is the
	// command's, and it goes on after this returns.
	own := &frame{sess: top.sess, id: top.id, docObj: top.docObj}
	release := w.p.tab.Hold()
	w.handedOff = true
	bctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), r.deadline.Add(100*time.Millisecond))
	go func() {
		defer release()
		defer w.cancel()
		defer cancel()
		r.run(bctx, bctx, own)
	}()
	return &answer, true
}

// runQuiet measures the DOM's quiet in the document of top (nil: the tab's
// current one, resolved anew after a navigation).
func (r *settleRun) runQuiet(cctx context.Context, top **frame) {
	r.gen++
	g := r.gen
	w, s := r.w, r.s
	go func() {
		// cctx ends when the settle does: no send outlives it.
		send := func(q *quietRes) {
			select {
			case r.quietDone <- quietMsg{g, q}:
			case <-cctx.Done():
			}
		}
		f, err := r.topOf(cctx, top)
		if err != nil {
			send(nil)
			return
		}
		var q quietRes
		left := time.Until(r.deadline)
		if left < 0 {
			left = 0
		}
		err = w.p.callValue(cctx, f, "", map[string]any{"op": "quiet", "ms": s.Quiet.Milliseconds(), "cap": left.Milliseconds(), "frames": s.Frames}, &q)
		if err != nil {
			send(nil)
			return
		}
		send(&q)
	}()
}

// topOf is the frame the settle measures: the command's top frame, or (a
// handed-off settle, own != nil) one of its own.
func (r *settleRun) topOf(ctx context.Context, own **frame) (*frame, error) {
	if own == nil {
		return r.w.p.topFrame(ctx)
	}
	if *own == nil {
		f := &frame{sess: r.w.p.tab, id: r.w.p.tabID}
		if err := r.w.p.resolveDoc(ctx, f); err != nil {
			return nil, err
		}
		*own = f
	}
	return *own, nil
}

// handle takes one event of the tab.
func (r *settleRun) handle(ev cdp.Event) {
	w, after := r.w, r.after
	switch ev.Method {
	case network.RequestWillBeSent.Method:
		e, _ := cdp.Decode(network.RequestWillBeSent, ev)
		if tracked(string(e.Type)) {
			r.inflight[e.RequestID] = true
		}
	case network.LoadingFinished.Method, network.LoadingFailed.Method:
		var id network.RequestID
		if e, ok := cdp.Decode(network.LoadingFinished, ev); ok {
			id = e.RequestID
		} else if e, ok := cdp.Decode(network.LoadingFailed, ev); ok {
			id = e.RequestID
		}
		if r.inflight[id] {
			delete(r.inflight, id)
			// Measured again even when a measure is running: that one
			// may end before the answer's handler runs.
			if len(r.inflight) == 0 {
				r.quieted = false
				r.remeasure = true
			}
		}
	case page.FrameRequestedNavigation.Method, page.FrameStartedNavigating.Method:
		// A requested navigation has no type; a started one may stay in the
		// document.
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
			r.requested = true
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
			r.newDoc = true
			// Measure the new document's quiet with what is left.
			r.quieted = false
			r.remeasure = true
		}
	case page.NavigatedWithinDocument.Method:
		e, _ := cdp.Decode(page.NavigatedWithinDocument, ev)
		if string(e.FrameID) == w.p.tabID {
			after.SameDocument = true
			after.URL = e.URL
		}
	case page.JavascriptDialogOpening.Method:
		r.dialog = true
	}
}

// run is the settle's wait, from its first measure; own is the frame of a
// handed-off settle (nil: the command's). cctx bounds the page calls, ctx
// the wait.
func (r *settleRun) run(cctx, ctx context.Context, own *frame) *After {
	w, s, after := r.w, r.s, r.after
	var top **frame
	if own != nil {
		top = &own
	}
	if r.newDoc {
		// Seen before the first measure (the quick end's events).
		r.newDoc, r.remeasure = false, false
		if own == nil {
			w.p.top = nil
		}
	}
	r.runQuiet(cctx, top)
	timer := time.NewTimer(time.Until(r.deadline))
	defer timer.Stop()
	// take handles an event, then what it asks for: a new document's frame,
	// a new measure.
	take := func(ev cdp.Event) {
		r.handle(ev)
		if r.newDoc {
			r.newDoc = false
			if own != nil {
				own = nil
			} else {
				w.p.top = nil
			}
		}
		if r.remeasure {
			r.remeasure = false
			r.runQuiet(cctx, top)
		}
	}
	for {
		if r.quieted && (!r.requested || after.Committed) && len(r.inflight) == 0 {
			break
		}
		// A handed-off settle does not wait on a dialog: the page is
		// blocked until a later command answers it.
		if own != nil && r.dialog {
			break
		}
		select {
		case ev, ok := <-w.events:
			if !ok {
				after.Ms = time.Since(r.start).Milliseconds()
				return after
			}
			w.taken++
			take(ev)
		case m := <-r.quietDone:
			// A quiet page may have said so before a request or a
			// navigation it started was seen here: every event sent before
			// its answer is taken first.
			if !w.drain(take) {
				after.Ms = time.Since(r.start).Milliseconds()
				return after
			}
			if m.gen != r.gen {
				continue
			}
			q := m.q
			r.quieted = true
			if q != nil {
				after.Quiet = q.Quiet
				after.QuietMs = int(time.Since(r.actEnd).Milliseconds()) - int(s.Quiet.Milliseconds())
				if q.Quiet {
					after.QuietMs = q.QuietMs
					if after.Committed {
						after.QuietMs = int(time.Since(r.actEnd).Milliseconds()) - int(s.Quiet.Milliseconds())
					}
				}
				if after.QuietMs < 0 {
					after.QuietMs = 0
				}
				if q.URL != "" {
					after.URL = q.URL
				}
				if own == nil {
					// The command reads them when settle returns.
					w.active, w.glanced = q.Active, q
				}
			} else if r.requested && !after.Committed {
				// The old document went away: wait for the commit.
				continue
			}
		case <-timer.C:
			after.Ms = time.Since(r.start).Milliseconds()
			if after.QuietMs == 0 && !after.Quiet {
				after.QuietMs = int(s.Cap.Milliseconds())
			}
			return after
		case <-ctx.Done():
			after.Ms = time.Since(r.start).Milliseconds()
			return after
		}
	}
	after.Ms = time.Since(r.start).Milliseconds()
	return after
}

// drain hands every event read before now and not yet taken to handle; false
// when the watch ended.
func (w *navWatch) drain(handle func(cdp.Event)) bool {
	for n := w.pushed(); w.taken < n; {
		ev, ok := <-w.events
		if !ok {
			return false
		}
		w.taken++
		handle(ev)
	}
	return true
}
