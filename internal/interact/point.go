package interact

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/output"
)

// Click points in frames: the library finds a point in the target's own
// viewport; toTop maps it into the tab's viewport through every frame
// element's box and transform (scaled, rotated, nested frames), and
// hitAtTop hit-tests the final point from the top, through the frames, so
// that a point that would reach another element never becomes a click.

// frameBoxRes is the library's frameBox answer.
type frameBoxRes struct {
	Box   [4]float64 `json:"box"`
	Local [4]float64 `json:"local"`
}

// localRoot is the nearest frame at or above f whose document is the root of
// its session: the tab's main frame or an out-of-process frame. Protocol
// geometry of a session is in its local root's viewport.
func localRoot(f *frame) *frame {
	for f.parent != nil && f.parent.sess == f.sess {
		f = f.parent
	}
	return f
}

// pointAt is a point in the viewport of a local root.
type pointAt struct {
	root *frame
	x, y float64
}

// toTop maps a point of f's viewport to the tab's viewport. It returns the
// point in each local root it passes, from f's up to the tab's (last); more
// points (a box's corners) are mapped to the tab's viewport in place.
func (p *Page) toTop(ctx context.Context, f *frame, x, y float64, more [][2]float64) ([]pointAt, error) {
	var pts []pointAt
	if localRoot(f) == f {
		pts = append(pts, pointAt{f, x, y})
	}
	for g := f; g.parent != nil; {
		quad, err := ownerQuad(ctx, g)
		if err != nil {
			return nil, err
		}
		if g.parent.sess != g.sess {
			// An out-of-process frame's scrollIntoView scrolls its parents
			// asynchronously, in their own process: take the frame element's
			// quad once it stays put over one of the parent's frames (or 100
			// ms: a background tab gets none), or the click would go where
			// the frame was before the scroll.
			for range 5 {
				if _, err := proto.Call(ctx, g.parent.sess, evaluate, runtime.EvaluateParams{Expression: "new Promise(r => { requestAnimationFrame(() => r()); setTimeout(r, 100); })", AwaitPromise: new(true)}); err != nil {
					break
				}
				again, err := ownerQuad(ctx, g)
				if err != nil {
					return nil, err
				}
				if slices.Equal(again, quad) {
					break
				}
				quad = again
			}
		}
		x, y = throughQuad(quad, g.local, x, y)
		for i, m := range more {
			more[i][0], more[i][1] = throughQuad(quad, g.local, m[0], m[1])
		}
		g = localRoot(g.parent)
		pts = append(pts, pointAt{g, x, y})
	}
	return pts, nil
}

// ownerQuad is the content quad of frame g's element in its parent's
// viewport.
func ownerQuad(ctx context.Context, g *frame) ([]float64, error) {
	q, err := proto.Call(ctx, g.parent.sess, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: proto.BackendNodeID(g.owner)})
	if err != nil {
		if isGone(err) || isProtocol(err) {
			return nil, fmt.Errorf("%w: %v", errGone, err)
		}
		return nil, wrapCDP(ctx, err)
	}
	if len(q.Quads) == 0 || len(q.Quads[0]) != 8 || g.local[2] <= 0 || g.local[3] <= 0 {
		return nil, &blockedErr{err: output.Errorf("not-visible", "the frame of the element is not visible")}
	}
	return q.Quads[0], nil
}

// throughQuad maps a point of a frame's viewport to the coordinates of the
// frame element's quad (its border box after transforms): local gives the
// viewport's offset in the untransformed border box and the box's size.
func throughQuad(q []float64, local [4]float64, x, y float64) (float64, float64) {
	u := (x + local[0]) / local[2]
	v := (y + local[1]) / local[3]
	return q[0] + u*(q[2]-q[0]) + v*(q[6]-q[0]), q[1] + u*(q[3]-q[1]) + v*(q[7]-q[1])
}

// hitAtTop hit-tests the mapped point from the tab's top document down
// through the frames (DOM.getNodeForLocation pierces in-process frames; each
// out-of-process frame is tested in its own session): every level must hit
// the next frame element of the chain, and the last the target (targetObj in
// frame f) or an element that counts as it. Anything else covers it.
func (p *Page) hitAtTop(ctx context.Context, f *frame, targetObj string, pts []pointAt, el *Element) error {
	for i := len(pts) - 1; i >= 0; i-- {
		pt := pts[i]
		var sc struct {
			Scroll [2]float64 `json:"scroll"`
		}
		if err := p.callValue(ctx, pt.root, "", map[string]any{"op": "info"}, &sc); err != nil {
			return err
		}
		// The protocol's hit test takes document coordinates of the root.
		hit, err := proto.Call(ctx, pt.root.sess, dom.GetNodeForLocation, dom.GetNodeForLocationParams{
			X: int64(math.Round(pt.x + sc.Scroll[0])), Y: int64(math.Round(pt.y + sc.Scroll[1])),
		})
		if err != nil {
			if isProtocol(err) {
				be := &blockedErr{err: output.Errorf("not-visible", "%s is not visible in the viewport (nothing at its point %d,%d)", describeEl(el), round(pts[len(pts)-1].x), round(pts[len(pts)-1].y)).With("element", el)}
				if pt.root.parent != nil {
					// An out-of-process frame just scrolled into view can
					// take a while to be hit-testable: wait for it.
					be.patience = untilDeadline
				}
				return be
			}
			return wrapCDP(ctx, err)
		}
		if i > 0 {
			next := pts[i-1].root
			if string(hit.FrameID) == next.parent.id && int64(hit.BackendNodeID) == next.owner {
				continue
			}
		} else if string(hit.FrameID) == f.id {
			obj, err := p.resolveNode(ctx, f, int64(hit.BackendNodeID))
			if err != nil {
				return err
			}
			var h struct {
				Error    string          `json:"error"`
				Covering json.RawMessage `json:"covering"`
			}
			r, err := p.callOn(ctx, f, targetObj, map[string]any{"op": "hitCheck"}, obj, byValue)
			if err != nil {
				return err
			}
			json.Unmarshal(r.Value, &h)
			if h.Error == "" {
				return nil
			}
			return &blockedErr{err: coveredErr(el, p.element(h.Covering, f)), patience: stableCover}
		}
		return &blockedErr{err: coveredErr(el, p.describeNode(ctx, pt.root, int64(hit.BackendNodeID))), patience: stableCover}
	}
	return nil
}

// describeNode describes a node of a session for an error (nil when it
// cannot be resolved).
func (p *Page) describeNode(ctx context.Context, root *frame, backendID int64) *Element {
	res, err := proto.Call(ctx, root.sess, resolveNode, dom.ResolveNodeParams{BackendNodeID: proto.BackendNodeID(backendID)})
	if err != nil || res.Object.ObjectID == "" {
		return nil
	}
	r, err := p.call(ctx, &frame{sess: root.sess}, res.Object.ObjectID, map[string]any{"op": "describe"}, byValue)
	if err != nil {
		return nil
	}
	return p.element(r.Value, &frame{})
}

// boxAtTop maps el's box, measured in frame f's viewport, to the bounding
// box of its corners in the tab's viewport.
func (p *Page) boxAtTop(ctx context.Context, f *frame, el *Element) error {
	ox, oy := f.offset()
	x0, y0 := float64(el.Box[0])-ox, float64(el.Box[1])-oy
	x1, y1 := x0+float64(el.Box[2]), y0+float64(el.Box[3])
	c := [][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
	if _, err := p.toTop(ctx, f, x0, y0, c); err != nil {
		return err
	}
	minX, minY, maxX, maxY := c[0][0], c[0][1], c[0][0], c[0][1]
	for _, m := range c[1:] {
		minX, minY, maxX, maxY = math.Min(minX, m[0]), math.Min(minY, m[1]), math.Max(maxX, m[0]), math.Max(maxY, m[1])
	}
	el.Box = [4]int{round(minX), round(minY), round(maxX - minX), round(maxY - minY)}
	return nil
}
