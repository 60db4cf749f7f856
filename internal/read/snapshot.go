package read

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/extract"
)

var (
	//go:embed js/serialize.js
	serializeJS string
	//go:embed js/frameid.js
	frameIDJS string
)

// SnapOptions tune Snapshot.
type SnapOptions struct {
	// KeepStyle keeps style attributes (results-page parsers match on them).
	KeepStyle bool
	// KeepAriaHidden keeps aria-hidden="true" subtrees, which are visible.
	KeepAriaHidden bool
	// NoFrames lists frames without reading their content.
	NoFrames bool
	// FrameTimeout bounds the reading of cross-origin frames (default 3 s).
	FrameTimeout time.Duration
	// MaxFrameDepth bounds how deep cross-origin frames nest (default 4).
	MaxFrameDepth int
}

// Frame is one rendered frame of a snapshot.
type Frame struct {
	// ID is dtb's id: f1, f2 … in flat-tree order, f2.1 inside f2.
	ID string `json:"id"`
	// FrameID is the browser's frame id (what --frame of the interaction
	// commands takes); "" when it could not be told.
	FrameID string `json:"frameId,omitempty"`
	URL     string `json:"url"`
	Origin  string `json:"origin,omitempty"`
	// Name is the frame element's name attribute.
	Name  string `json:"name,omitempty"`
	Read  bool   `json:"read"`
	Error string `json:"error,omitempty"`
	HTML  string `json:"-"`
}

// Snapshot is the page as serialize.js read it.
type Snapshot struct {
	URL    string
	Title  string
	Origin string
	HTML   string
	Frames []Frame
	Nodes  int
	// Hidden says why the page as a whole is invisible (a hidden <body> or
	// <html>, read as if shown); "" when it is not.
	Hidden string
	// PageMs is the time the page-side pass took.
	PageMs int64
}

// Input is the snapshot as internal/extract's input.
func (s *Snapshot) Input() extract.Input {
	in := extract.Input{URL: s.URL, Title: s.Title, HTML: s.HTML}
	for _, f := range s.Frames {
		in.Frames = append(in.Frames, extract.Frame{ID: f.ID, URL: f.URL, Origin: f.Origin, HTML: f.HTML, Read: f.Read, Error: f.Error})
	}
	return in
}

type serialOpts struct {
	Prefix string `json:"prefix"`
	// Top marks the tab's own document (not a frame read on its own).
	Top            bool `json:"top"`
	KeepStyle      bool `json:"keepStyle"`
	KeepAriaHidden bool `json:"keepAriaHidden"`
	Frames         bool `json:"frames"`
}

type rawFrame struct {
	ID      string `json:"id"`
	FrameID string `json:"-"`
	URL     string `json:"url"`
	Origin  string `json:"origin"`
	Title   string `json:"title"`
	Name    string `json:"name"`
	HTML    string `json:"html"`
	Read    bool   `json:"read"`
	Pending bool   `json:"pending"`
	Error   string `json:"error"`
}

type rawDoc struct {
	URL    string     `json:"url"`
	Title  string     `json:"title"`
	Origin string     `json:"origin"`
	HTML   string     `json:"html"`
	Frames []rawFrame `json:"frames"`
	Nodes  int        `json:"nodes"`
	Ms     int64      `json:"ms"`
	Hidden string     `json:"hidden"`
}

// Take reads the rendered, visible DOM of the tab in one page-side pass
// (open shadow roots flattened, same-origin frames through contentDocument),
// then reads each cross-origin frame in its own context: an in-process one in
// an isolated world of its frame, an out-of-process one (OOPIF) in the session
// Target.setAutoAttach gives it. Nothing of that costs anything on a page
// without cross-origin frames.
func Take(ctx context.Context, p *cdp.Page, o SnapOptions) (*Snapshot, error) {
	if o.FrameTimeout <= 0 {
		o.FrameTimeout = 3 * time.Second
	}
	if o.MaxFrameDepth <= 0 {
		o.MaxFrameDepth = 4
	}
	so := serialOpts{Prefix: "f", Top: true, KeepStyle: o.KeepStyle, KeepAriaHidden: o.KeepAriaHidden, Frames: !o.NoFrames}
	raw, err := p.CallJS(ctx, serializeJS, false, so)
	if err != nil {
		return nil, err
	}
	var doc rawDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading the page: %w", err)
	}
	snap := &Snapshot{URL: doc.URL, Title: doc.Title, Origin: doc.Origin, HTML: doc.HTML, Nodes: doc.Nodes, Hidden: doc.Hidden, PageMs: doc.Ms}
	frames := doc.Frames
	if !o.NoFrames && len(frames) > 0 {
		// The browser's ids of the frames, and the content of the cross-origin ones.
		fctx, cancel := context.WithTimeout(ctx, o.FrameTimeout)
		r := &frameReader{opts: o, frames: map[string]*rawFrame{}}
		for i := range frames {
			r.order = append(r.order, frames[i].ID)
			r.frames[frames[i].ID] = &frames[i]
		}
		r.readSession(fctx, p, hasPending(frames), 1)
		cancel()
		frames = r.list()
	}
	for _, f := range frames {
		sf := Frame{ID: f.ID, FrameID: f.FrameID, URL: f.URL, Origin: f.Origin, Name: f.Name, HTML: f.HTML, Read: f.Read, Error: f.Error}
		if f.Pending && !f.Read && sf.Error == "" {
			sf.Error = "cross-origin frame could not be reached"
		}
		snap.Frames = append(snap.Frames, sf)
	}
	return snap, nil
}

func hasPending(fs []rawFrame) bool {
	for _, f := range fs {
		if f.Pending && !f.Read {
			return true
		}
	}
	return false
}

// frameReader reads the cross-origin frames a serialisation left pending.
type frameReader struct {
	opts   SnapOptions
	mu     sync.Mutex
	frames map[string]*rawFrame
	order  []string
}

func (r *frameReader) list() []rawFrame {
	out := make([]rawFrame, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, *r.frames[id])
	}
	return out
}

func (r *frameReader) pending(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.frames[id]
	return f != nil && f.Pending && !f.Read
}

// pendingHere counts the unread cross-origin frames not delegated to the
// session of an out-of-process frame (ids under one of the delegated prefixes).
func (r *frameReader) pendingHere(delegated []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
next:
	for _, f := range r.frames {
		if !f.Pending || f.Read || f.Error != "" {
			continue
		}
		for _, d := range delegated {
			if f.ID == d || strings.HasPrefix(f.ID, d+".") {
				continue next
			}
		}
		n++
	}
	return n
}

// fill records a frame's content and inserts its own frames after it.
func (r *frameReader) fill(id string, doc *rawDoc, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.frames[id]
	if f == nil {
		return
	}
	if err != nil {
		f.Error = err.Error()
		return
	}
	f.Read, f.HTML, f.URL, f.Origin, f.Error = true, doc.HTML, doc.URL, doc.Origin, ""
	at := 0
	for i, x := range r.order {
		if x == id {
			at = i + 1
		}
	}
	var ids []string
	for i := range doc.Frames {
		nf := doc.Frames[i]
		r.frames[nf.ID] = &nf
		ids = append(ids, nf.ID)
	}
	r.order = append(r.order[:at], append(ids, r.order[at:]...)...)
}

// setFrameID records the browser's id of frame id.
func (r *frameReader) setFrameID(id, frameID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.frames[id]; f != nil {
		f.FrameID = frameID
	}
}

// readSession matches the frames of session s (whose main frame's document was
// serialised in s's main world) to the browser's frame ids and, with attach,
// reads the pending cross-origin ones: those in s's process (cross-origin but
// same-site, or any with site isolation off) in isolated worlds, out-of-process
// ones in the session Target.setAutoAttach gives them, recursively.
func (r *frameReader) readSession(ctx context.Context, s *cdp.Page, attach bool, depth int) {
	if depth > r.opts.MaxFrameDepth {
		return
	}
	var oopifs *cdp.OOPIFAttach
	if attach {
		// Answered while the frame tree is walked.
		oopifs = s.AttachOOPIFs(ctx)
		defer oopifs.Close()
	}

	// walked maps a frame id to the world that serialised its document (0: the
	// main world).
	walked := map[string]int64{}
	if tree, err := s.FrameTree(ctx); err == nil {
		walked[tree.Frame.ID] = 0
		queue := append([]cdp.FrameTree(nil), tree.ChildFrames...)
		for len(queue) > 0 {
			ft := queue[0]
			queue = queue[1:]
			world, ok := walked[ft.Frame.ParentID]
			if !ok {
				continue // its owner's document was not read
			}
			id := ownerID(ctx, s, ft.Frame.ID, world)
			if id == "" {
				continue
			}
			r.setFrameID(id, ft.Frame.ID)
			if r.pending(id) {
				w, doc, err := readInWorld(ctx, s, ft.Frame.ID, id, r.opts)
				r.fill(id, doc, err)
				if err != nil {
					continue
				}
				walked[ft.Frame.ID] = w
			} else {
				walked[ft.Frame.ID] = world
			}
			queue = append(queue, ft.ChildFrames...)
		}
	}
	if oopifs == nil || oopifs.Started() != nil {
		return
	}
	// Stop attaching when done (this also detaches the frames attached here), so
	// a later read on the same connection is told about them again.
	defer oopifs.Detach(context.WithoutCancel(ctx))
	// Out-of-process frames: attached as the auto-attach starts. Wait for as
	// many as frames are still pending here.
	var wg sync.WaitGroup
	defer wg.Wait()
	grace := time.NewTimer(250 * time.Millisecond)
	defer grace.Stop()
	var delegated []string
	for r.pendingHere(delegated) > 0 {
		o, err := oopifs.Next(ctx, grace.C)
		if o == nil || err != nil {
			return
		}
		id := ownerID(ctx, s, o.FrameID, walked[o.ParentFrameID])
		if id == "" || !r.pending(id) {
			continue
		}
		r.setFrameID(id, o.FrameID)
		delegated = append(delegated, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc, err := readMain(ctx, o.Session, id, r.opts)
			r.fill(id, doc, err)
			if err == nil && len(doc.Frames) > 0 {
				r.readSession(ctx, o.Session, hasPending(doc.Frames), depth+1)
			}
		}()
	}
}

// ownerID is the id serialize.js gave the element owning frame frameID, looked
// up in the world that serialised the owner's document ("" when unknown).
func ownerID(ctx context.Context, s *cdp.Page, frameID string, world int64) string {
	owner, err := s.FrameOwner(ctx, frameID)
	if err != nil || owner == 0 {
		return ""
	}
	node, err := proto.Call(ctx, s, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: proto.BackendNodeID(owner), ObjectGroup: "dtb-read", ExecutionContextID: runtime.ExecutionContextID(world)})
	if err != nil || node.Object == nil || node.Object.ObjectID == "" {
		return ""
	}
	defer proto.Call(context.WithoutCancel(ctx), s, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: node.Object.ObjectID})
	res, err := proto.Call(ctx, s, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: strings.TrimSpace(frameIDJS),
		ObjectID:            node.Object.ObjectID,
		ReturnByValue:       new(true),
	})
	if err != nil {
		return ""
	}
	var id string
	if json.Unmarshal(cdp.RawValue(res.Result), &id) != nil {
		return ""
	}
	return id
}

// readMain serialises the main world of a session (an OOPIF's document).
func readMain(ctx context.Context, s *cdp.Page, id string, o SnapOptions) (*rawDoc, error) {
	so := serialOpts{Prefix: id + ".", KeepStyle: o.KeepStyle, KeepAriaHidden: o.KeepAriaHidden, Frames: true}
	raw, err := s.CallJS(ctx, serializeJS, false, so)
	if err != nil {
		return nil, err
	}
	var doc rawDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// readInWorld serialises an in-process frame's document in an isolated world of
// that frame and returns the world's execution context.
func readInWorld(ctx context.Context, s *cdp.Page, frameID, id string, o SnapOptions) (int64, *rawDoc, error) {
	world, err := s.IsolatedWorld(ctx, frameID, "dtb-read")
	if err != nil {
		return 0, nil, err
	}
	so := serialOpts{Prefix: id + ".", KeepStyle: o.KeepStyle, KeepAriaHidden: o.KeepAriaHidden, Frames: true}
	arg, err := cdp.Arg(so)
	if err != nil {
		return 0, nil, err
	}
	res, err := proto.Call(ctx, s, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: strings.TrimSpace(serializeJS),
		ExecutionContextID:  runtime.ExecutionContextID(world),
		Arguments:           []*runtime.CallArgument{arg},
		ReturnByValue:       new(true),
	})
	if err != nil {
		return 0, nil, err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		return 0, nil, fmt.Errorf("reading the frame: %s", msg)
	}
	var doc rawDoc
	if err := json.Unmarshal(cdp.RawValue(res.Result), &doc); err != nil {
		return 0, nil, err
	}
	return world, &doc, nil
}
