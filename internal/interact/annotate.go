package interact

import (
	"context"
	"time"
)

// Annotation is one element an annotated screenshot shows: its ref, as
// inspect lists it, and its box in the image's CSS pixels (the viewport's
// coordinates, or the document's for a full-page capture), cut to the image.
type Annotation struct {
	Ref   string `json:"ref"`
	Role  string `json:"role"`
	Name  string `json:"name,omitempty"`
	Box   [4]int `json:"box"`
	Frame string `json:"frame,omitempty"`
}

// Annotated is the outcome of Annotate.
type Annotated struct {
	// Inspection is the inspect the refs come from; its Refs are to be
	// stored in the session (StoreRefs) like inspect's.
	Inspection  *Inspection
	Annotations []Annotation
}

// annotateCleanup bounds removing the overlay, which runs on a context of
// its own: a capture that failed or ran out of time still removes it, and a
// page too busy to answer holds the command this long past its deadline at
// most (the next --annotate clears an overlay left behind).
const annotateCleanup = 500 * time.Millisecond

// Annotate lists the tab's elements as Inspect does, draws each visible one's
// box and ref over the page (the viewport, or with full the whole page),
// runs shoot, and removes the overlay again whatever happened.
func (p *Page) Annotate(ctx context.Context, full bool, shoot func(context.Context) error) (*Annotated, error) {
	ins, err := p.Inspect(ctx, InspectOptions{})
	if err != nil {
		return nil, err
	}
	top, err := p.topFrame(ctx)
	if err != nil {
		return nil, wrapCDP(ctx, err)
	}
	var idx []int
	boxes := [][4]int{}
	labels := []string{}
	for i, it := range ins.Items {
		if it.Hidden {
			continue
		}
		idx = append(idx, i)
		boxes = append(boxes, it.Box)
		labels = append(labels, it.Ref)
	}
	var res struct {
		Drawn []int    `json:"drawn"`
		Boxes [][4]int `json:"boxes"`
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), annotateCleanup)
		defer cancel()
		// A document that went away took its overlay with it.
		p.callValue(cctx, top, "", map[string]any{"op": "annotateRemove"}, nil)
	}()
	if err := p.callValue(ctx, top, "", map[string]any{"op": "annotate", "boxes": boxes, "labels": labels, "full": full}, &res); err != nil {
		return nil, wrapCDP(ctx, err)
	}
	out := &Annotated{Inspection: ins, Annotations: []Annotation{}}
	for k, d := range res.Drawn {
		if d < 0 || d >= len(idx) || k >= len(res.Boxes) {
			continue
		}
		it := ins.Items[idx[d]]
		out.Annotations = append(out.Annotations, Annotation{Ref: it.Ref, Role: it.Role, Name: it.Name, Box: res.Boxes[k], Frame: it.Frame})
	}
	if err := shoot(ctx); err != nil {
		return nil, err
	}
	return out, nil
}
