package interact

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// chooserWatch intercepts the file choosers a tab (and the session of an
// out-of-process frame) opens while it is on: no native dialog opens, and
// Page.fileChooserOpened says which input asked. Click uses it to report a
// chooser its click opened; Upload to answer it.
type chooserWatch struct {
	sessions []*cdp.Page
	got      chan chooserOpened
	stops    []func()
	mu       sync.Mutex
	first    *chooserOpened
}

// chooserOpened is one Page.fileChooserOpened.
type chooserOpened struct {
	sess          *cdp.Page
	BackendNodeID int64  `json:"backendNodeId"`
	Mode          string `json:"mode"`
}

// watchChooser turns interception on in the tab and, when it is another
// session, in frame session fs.
func (p *Page) watchChooser(ctx context.Context, fs *cdp.Page) (*chooserWatch, error) {
	w := &chooserWatch{sessions: []*cdp.Page{p.tab}, got: make(chan chooserOpened, 2)}
	if fs != nil && fs != p.tab {
		w.sessions = append(w.sessions, fs)
	}
	for _, s := range w.sessions {
		ch, stop := s.Events("Page.fileChooserOpened")
		w.stops = append(w.stops, stop)
		go func(s *cdp.Page) {
			for ev := range ch {
				var o chooserOpened
				json.Unmarshal(ev.Params, &o)
				o.sess = s
				w.mu.Lock()
				if w.first == nil {
					w.first = &o
				}
				w.mu.Unlock()
				select {
				case w.got <- o:
				default:
				}
			}
		}(s)
		if s != p.tab {
			s.Call(ctx, "Page.enable", nil, nil)
		}
		if err := s.Call(ctx, "Page.setInterceptFileChooserDialog", map[string]any{"enabled": true}, nil); err != nil {
			w.stop(ctx)
			return nil, wrapCDP(ctx, err)
		}
	}
	return w, nil
}

// opened is the first chooser opened so far, or nil.
func (w *chooserWatch) opened() *chooserOpened {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

// stop turns interception off again (whatever ctx's state) and ends the
// subscriptions.
func (w *chooserWatch) stop(ctx context.Context) {
	// Interception belongs to the connection, which ends with the command; a
	// page blocked by a dialog left open would not answer.
	if !cdp.LeftOpen(ctx) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		for _, s := range w.sessions {
			s.Call(cctx, "Page.setInterceptFileChooserDialog", map[string]any{"enabled": false}, nil)
		}
	}
	for _, stop := range w.stops {
		stop()
	}
}

// reportChooser ends a click's interception and, when the click opened a
// file chooser, reports it on res (multiple, accept) with the command that
// answers it: dtb upload on the same locator. The chooser left unanswered
// does not keep the input from opening another one: the upload that follows
// gets its own (TestClickReportsFileChooser).
func (p *Page) reportChooser(ctx context.Context, w *chooserWatch, loc Locator, res *Result) {
	op := w.opened()
	if op != nil && !cdp.LeftOpen(ctx) {
		info := map[string]any{"multiple": op.Mode == "selectMultiple", "accept": ""}
		var r struct {
			Object remote `json:"object"`
		}
		if op.sess.Call(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": op.BackendNodeID}, &r) == nil && r.Object.ObjectID != "" {
			var v callResult
			if op.sess.Call(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { return this.accept || '' }", "objectId": r.Object.ObjectID, "returnByValue": true}, &v) == nil {
				var accept string
				json.Unmarshal(v.Result.Value, &accept)
				info["accept"] = accept
			}
		}
		if res != nil {
			res.set("fileChooser", info)
			res.set("hint", "the click opened a file chooser, left unanswered; answer it with: dtb upload "+loc.String()+" FILE…")
		}
	}
	w.stop(ctx)
}
