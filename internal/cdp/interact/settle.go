package interact

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// navWatch watches the tab's main frame around an action: navigations that
// start, commit or stay in the document, then how long the DOM takes to go
// quiet.
type navWatch struct {
	p       *Page
	events  <-chan cdp.Event
	cancel  func()
	err     error
	enabled bool
	active  map[string]any
}

// watch starts watching (Page.enable, so that navigation events flow).
func (p *Page) watch(ctx context.Context) *navWatch {
	ch, cancel := p.tab.Events("*")
	w := &navWatch{p: p, events: ch, cancel: cancel}
	w.err = p.tab.Call(ctx, "Page.enable", nil, nil)
	w.enabled = w.err == nil
	return w
}

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

// settle waits, at most s.Cap, for the DOM to stay unchanged for s.Quiet and
// for a navigation that started to commit, and reports what happened.
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
			top, err := w.p.topFrame(cctx)
			if err != nil {
				quietDone <- quietMsg{g, nil}
				return
			}
			var q quietRes
			left := time.Until(deadline)
			if left < 0 {
				left = 0
			}
			err = w.p.callValue(cctx, top, "", map[string]any{"op": "quiet", "ms": s.Quiet.Milliseconds(), "cap": left.Milliseconds()}, &q)
			if err != nil {
				quietDone <- quietMsg{g, nil}
				return
			}
			quietDone <- quietMsg{g, &q}
		}()
	}
	runQuiet()
	quieted := false
	requested := false
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		if quieted && (!requested || after.Committed) {
			break
		}
		select {
		case ev, ok := <-w.events:
			if !ok {
				after.Ms = time.Since(start).Milliseconds()
				return after
			}
			switch ev.Method {
			case "Page.frameRequestedNavigation", "Page.frameStartedNavigating":
				var e struct {
					FrameID        string `json:"frameId"`
					URL            string `json:"url"`
					NavigationType string `json:"navigationType"`
				}
				json.Unmarshal(ev.Params, &e)
				if e.FrameID == w.p.tabID && e.NavigationType != "sameDocument" {
					requested = true
					after.Navigated = true
					if e.URL != "" && after.URL == "" {
						after.URL = e.URL
					}
				}
			case "Page.frameNavigated":
				var e struct {
					Frame struct {
						ID       string `json:"id"`
						ParentID string `json:"parentId"`
						URL      string `json:"url"`
					} `json:"frame"`
					Type string `json:"type"`
				}
				json.Unmarshal(ev.Params, &e)
				if e.Frame.ParentID == "" && (e.Frame.ID == w.p.tabID || w.p.tabID == "") {
					after.Navigated, after.Committed = true, true
					after.URL = e.Frame.URL
					w.p.top = nil
					// Measure the new document's quiet with what is left.
					quieted = false
					runQuiet()
				}
			case "Page.navigatedWithinDocument":
				var e struct {
					FrameID string `json:"frameId"`
					URL     string `json:"url"`
				}
				json.Unmarshal(ev.Params, &e)
				if e.FrameID == w.p.tabID {
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
