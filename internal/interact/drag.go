package interact

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/dragwatch.js
var dragWatchJS string

// DragOptions configure Drag.
type DragOptions struct {
	Steps  int  // intermediate mouse moves between the ends; 0 means 10
	Force  bool // skip the covered check at both ends
	Settle Settle
}

// dragRecord is what the target's window saw (js/dragwatch.js).
type dragRecord struct {
	DragStart    int  `json:"dragstart"`
	DragEnter    int  `json:"dragenter"`
	DragOver     int  `json:"dragover"`
	Drop         int  `json:"drop"`
	DragEnd      int  `json:"dragend"`
	MouseUp      int  `json:"mouseup"`
	PointerUp    int  `json:"pointerup"`
	ReleasedOver bool `json:"releasedOver"`
}

// interceptWait is how long Drag waits after the last move for the browser
// to report that an HTML5 drag started (it reports it asynchronously).
const interceptWait = 100 * time.Millisecond

// Drag presses the mouse on the source's visible centre, moves it in steps
// to the target's and releases it there, with real input events. When the
// page starts an HTML5 drag (a draggable source), the browser hands the drag
// to dtb (Input.setInterceptDrags) and dtb delivers dragenter, dragover and
// drop at the target with the page's own drag data. It succeeds only when the
// drop reached the target: a drop event in an HTML5 drag, else a mouseup
// released over the target; otherwise it fails not-dropped.
func (p *Page) Drag(ctx context.Context, src, dst Locator, o DragOptions) (*Result, error) {
	start := time.Now()
	steps := o.Steps
	if steps <= 0 {
		steps = 10
	}
	if steps > 200 {
		return nil, output.Usage("--steps is at most 200")
	}
	w := p.watch(ctx)
	defer w.stop()
	point := func(loc Locator, press bool) (*outcome, [2]float64, error) {
		out, err := p.act(ctx, loc, needVisible, action{"kind": "point", "force": o.Force, "click": press})
		if err != nil {
			return nil, [2]float64{}, err
		}
		var pt struct{ X, Y float64 }
		json.Unmarshal(out.act, &pt)
		return out, [2]float64{pt.X, pt.Y}, nil
	}
	// The target first, then the source: bringing the source into view moves
	// the page only when it is out of view, so the target is measured again.
	if _, _, err := point(dst, false); err != nil {
		return nil, err
	}
	srcOut, from, err := point(src, true)
	if err != nil {
		return nil, err
	}
	dstOut, to, err := point(dst, false)
	if err != nil {
		return nil, err
	}
	obj, err := p.outcomeObject(ctx, dst, dstOut, false)
	if err != nil {
		return nil, err
	}
	if err := p.dragWatch(ctx, dstOut.frame, obj, "start", nil); err != nil {
		return nil, err
	}
	if err := w.ready(ctx); err != nil {
		return nil, err
	}
	intercepted, stopIntercept := cdp.On(p.tab, input.DragIntercepted)
	defer stopIntercept()
	if _, err := proto.Call(ctx, p.tab, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: true}); err != nil {
		return nil, wrapCDP(ctx, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		proto.Call(cctx, p.tab, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: false})
	}()

	const left = 1 // buttons mask of the left button
	if err := p.mouse(ctx, "mouseMoved", from[0], from[1], "none", 0, 0, 0); err != nil {
		return nil, err
	}
	if err := p.mouse(ctx, "mousePressed", from[0], from[1], "left", left, 1, 0); err != nil {
		return nil, err
	}
	var dragData *input.DragData
	take := func(ev cdp.Event) {
		if e, ok := cdp.Decode(input.DragIntercepted, ev); ok && e.Data != nil {
			dragData = e.Data
		}
	}
	// takeIntercept notes an HTML5 drag the browser handed over, waiting for
	// its report at most wait.
	takeIntercept := func(wait time.Duration) {
		if dragData != nil {
			return
		}
		if wait <= 0 {
			select {
			case ev := <-intercepted:
				take(ev)
			default:
			}
			return
		}
		select {
		case ev := <-intercepted:
			take(ev)
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	entered := false
	dragEvent := func(typ input.DispatchDragEventType, x, y float64) error {
		_, err := proto.Call(ctx, p.tab, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: dragData})
		return wrapCDP(ctx, err)
	}
	for i := 1; i <= steps; i++ {
		f := float64(i) / float64(steps)
		x, y := from[0]+(to[0]-from[0])*f, from[1]+(to[1]-from[1])*f
		if i == 1 {
			// Past the drag threshold, then the first step: a page starts its
			// HTML5 drag on the first moves.
			nx, ny := nudge(from, to)
			if err := p.mouse(ctx, "mouseMoved", nx, ny, "left", left, 0, 0); err != nil {
				return nil, err
			}
			takeIntercept(interceptWait / 2)
		}
		if dragData == nil {
			if err := p.mouse(ctx, "mouseMoved", x, y, "left", left, 0, 0); err != nil {
				return nil, err
			}
			takeIntercept(0)
			continue
		}
		typ := input.DispatchDragEventTypeDragOver
		if !entered {
			typ, entered = input.DispatchDragEventTypeDragEnter, true
		}
		if err := dragEvent(typ, x, y); err != nil {
			return nil, err
		}
	}
	takeIntercept(interceptWait)
	mode := "mouse"
	if dragData != nil {
		mode = "html5"
		if !entered {
			if err := dragEvent("dragEnter", to[0], to[1]); err != nil {
				return nil, err
			}
		}
		if err := dragEvent("dragOver", to[0], to[1]); err != nil {
			return nil, err
		}
		if err := dragEvent("drop", to[0], to[1]); err != nil {
			return nil, err
		}
	}
	if err := p.mouse(ctx, "mouseReleased", to[0], to[1], "left", 0, 1, 0); err != nil {
		return nil, err
	}
	var rec dragRecord
	if err := p.dragWatch(ctx, dstOut.frame, obj, "read", &rec); err != nil {
		return nil, err
	}
	res := &Result{Action: "drag", Element: srcOut.Element}
	res.set("target", dstOut.Element)
	res.set("from", []int{round(from[0]), round(from[1])})
	res.set("to", []int{round(to[0]), round(to[1])})
	res.set("mode", mode)
	res.set("steps", steps)
	res.set("events", rec)
	dropped := rec.ReleasedOver
	if mode == "html5" {
		dropped = rec.Drop > 0
	}
	if !dropped {
		why := "the mouse was not released over it (it moved away, or something covered it)"
		if mode == "html5" {
			why = "the page started an HTML5 drag but no drop event reached the target (a drop target must cancel dragover)"
		}
		return nil, output.Errorf("not-dropped", "dragging %s onto %s did not drop: %s", describeEl(srcOut.Element), describeEl(dstOut.Element), why).
			With("element", srcOut.Element).With("target", dstOut.Element).With("mode", mode).With("events", rec)
	}
	res.After = w.settle(ctx, o.Settle, start)
	return res, nil
}

// nudge is a point a few pixels from from towards to: past the drag threshold
// a page or the browser needs before a drag starts.
func nudge(from, to [2]float64) (float64, float64) {
	dx, dy := to[0]-from[0], to[1]-from[1]
	d := math.Hypot(dx, dy)
	if d < 1 {
		return from[0] + 5, from[1]
	}
	step := math.Min(5, d/2)
	return from[0] + dx/d*step, from[1] + dy/d*step
}

// outcomeObject is the objectId of the element an outcome acted on (with
// control, the file input of a located label).
func (p *Page) outcomeObject(ctx context.Context, loc Locator, out *outcome, control bool) (string, error) {
	if out.obj != "" {
		r, err := p.call(ctx, out.frame, out.obj, map[string]any{"op": "refElement", "control": control}, byObject)
		if err != nil {
			return "", err
		}
		return r.ObjectID, nil
	}
	l := loc
	l.Nth = NoNth
	r, err := p.call(ctx, out.frame, "", map[string]any{"op": "element", "loc": l, "need": needAny, "pick": out.local, "control": control}, byObject)
	if err != nil {
		return "", err
	}
	if r.Subtype != "node" {
		return "", fmt.Errorf("%w: the element moved", errGone)
	}
	return r.ObjectID, nil
}

// dragWatch runs js/dragwatch.js on the target element (op start or read).
func (p *Page) dragWatch(ctx context.Context, f *frame, obj, op string, out *dragRecord) error {
	arg, err := cdp.Arg(op)
	if err != nil {
		return wrapCDP(ctx, err)
	}
	params := runtime.CallFunctionOnParams{FunctionDeclaration: dragWatchJS, ObjectID: runtime.RemoteObjectID(obj), Arguments: []*runtime.CallArgument{arg}, ReturnByValue: new(true)}
	res, err := proto.Call(ctx, f.sess, runtime.CallFunctionOn, params)
	if err != nil {
		if isGone(err) {
			return output.Errorf("not-dropped", "the drop target left the document during the drag")
		}
		return wrapCDP(ctx, err)
	}
	if res.ExceptionDetails != nil {
		return output.Errorf("threw", "watching the drop target failed: %s", res.ExceptionDetails.Text)
	}
	if out != nil {
		v := cdp.RawValue(res.Result)
		if string(v) == "null" {
			return output.Errorf("not-dropped", "the drop target's document was replaced during the drag")
		}
		return json.Unmarshal(v, out)
	}
	return nil
}
