package interact

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

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
	keptOn   *cdp.Page // the session whose interception stays on
}

// chooserOpened is one Page.fileChooserOpened.
type chooserOpened struct {
	sess *cdp.Page
	page.EventFileChooserOpened
}

// intercept turns file-chooser interception on or off.
func intercept(on bool) page.SetInterceptFileChooserDialogParams {
	return page.SetInterceptFileChooserDialogParams{Enabled: on}
}

// watchChooser turns interception on in the tab without waiting for the
// answer: the browser handles the tab's commands in order, so once a later
// command on the tab has been answered (locating the element) it is on, and
// a click costs no round trip of its own for it. (Sent with the input events
// in one Pipeline it is not: input reaches the renderer another way.)
//
// On a connection the session host keeps, interception is turned on once and
// stays on (a chooser the page opens between commands is not shown either
// way in a headless tab; one left unanswered does not keep the page from
// opening the next): a click then costs the tab nothing for it.
func (p *Page) watchChooser(ctx context.Context) *chooserWatch {
	w := &chooserWatch{got: make(chan chooserOpened, 2)}
	w.listen(p.tab)
	if !p.tab.Kept() {
		cdp.Post(ctx, p.tab, page.SetInterceptFileChooserDialog, intercept(true))
		return w
	}
	p.tab.OncePerConn("chooser", func() error {
		cdp.Post(ctx, p.tab, page.SetInterceptFileChooserDialog, intercept(true))
		return nil
	})
	w.keptOn = p.tab
	return w
}

// add turns interception on in frame session fs too, when it is another
// session than the tab's (an out-of-process frame), and waits for it.
func (w *chooserWatch) add(ctx context.Context, fs *cdp.Page) error {
	if fs == nil || slices.Contains(w.sessions, fs) {
		return nil
	}
	w.listen(fs)
	proto.Call(ctx, fs, page.Enable, page.EnableParams{})
	if _, err := proto.Call(ctx, fs, page.SetInterceptFileChooserDialog, intercept(true)); err != nil {
		return wrapCDP(ctx, err)
	}
	return nil
}

// listen follows session s's Page.fileChooserOpened.
func (w *chooserWatch) listen(s *cdp.Page) {
	w.sessions = append(w.sessions, s)
	ch, stop := cdp.On(s, page.FileChooserOpened)
	w.stops = append(w.stops, stop)
	go func() {
		for ev := range ch {
			e, _ := cdp.Decode(page.FileChooserOpened, ev)
			o := chooserOpened{sess: s, EventFileChooserOpened: e}
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
	}()
}

// chooserGrace bounds the wait for the chooser of a click that reached a
// file input (a chooser the browser does not show, under showPicker's rules,
// is never reported).
const chooserGrace = time.Second

// await waits, at most d, for a chooser to be reported.
func (w *chooserWatch) await(ctx context.Context, d time.Duration) {
	if w.opened() != nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	// A click's own watch (an upload's click has the upload's, and never
	// waits here): nobody else reads got, and opened() has it once got has.
	select {
	case <-w.got:
	case <-t.C:
	case <-ctx.Done():
	}
}

// opened is the first chooser opened so far, or nil.
func (w *chooserWatch) opened() *chooserOpened {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

// stop turns interception off again (whatever ctx's state) and ends the
// subscriptions. The switch-off is not waited for: the browser handles the
// session's later commands after it, and a page blocked by a dialog or a
// busy script must not hold the command past its deadline.
func (w *chooserWatch) stop(ctx context.Context) {
	for _, s := range w.sessions {
		if s == w.keptOn {
			continue // stays on (watchChooser)
		}
		cdp.Post(context.WithoutCancel(ctx), s, page.SetInterceptFileChooserDialog, intercept(false))
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
		if r, err := proto.Call(ctx, op.sess, resolveNode, dom.ResolveNodeParams{BackendNodeID: op.BackendNodeID}); err == nil && r.Object.ObjectID != "" {
			if v, err := proto.Call(ctx, op.sess, callFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: "function () { return this.accept || '' }", ObjectID: runtime.RemoteObjectID(r.Object.ObjectID), ReturnByValue: new(true)}); err == nil {
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
