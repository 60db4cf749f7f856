package cdp

import (
	"context"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// The frame machinery interaction and reading share: a session's frame tree,
// isolated worlds, frame owners, and the out-of-process iframes (OOPIFs) that
// Target.setAutoAttach attaches. Every method works on the tab or on a child
// session (an OOPIF's), so nested OOPIFs are reached by doing the same again
// on the OOPIF's session.

// FrameTree is the tree of the frames a session's renderer process holds
// (Page.getFrameTree), its main frame at the root. An out-of-process frame is
// not in it: it is the root of its own session's tree.
type FrameTree struct {
	Frame       FrameInfo
	ChildFrames []FrameTree
}

// FrameInfo is the part of a cdproto frame dtb reads.
type FrameInfo struct {
	ID, ParentID, Name, URL string
}

// FrameTree lists the frames of the page's session.
func (p *Page) FrameTree(ctx context.Context) (*FrameTree, error) {
	res, err := proto.Call(ctx, p, page.GetFrameTree, proto.Empty{})
	if err != nil {
		return nil, err
	}
	t := frameTreeOf(res.FrameTree)
	return &t, nil
}

func frameTreeOf(t *page.FrameTree) FrameTree {
	var out FrameTree
	if t == nil {
		return out
	}
	if f := t.Frame; f != nil {
		out.Frame = FrameInfo{ID: string(f.ID), ParentID: string(f.ParentID), Name: f.Name, URL: f.URL}
	}
	for _, c := range t.ChildFrames {
		out.ChildFrames = append(out.ChildFrames, frameTreeOf(c))
	}
	return out
}

// IsolatedWorld creates a JavaScript world named name in frame frameID of the
// page's session, apart from the page's own scripts (Page.createIsolatedWorld),
// and returns its execution context id.
func (p *Page) IsolatedWorld(ctx context.Context, frameID, name string) (int64, error) {
	w, err := proto.Call(ctx, p, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: proto.FrameID(frameID), WorldName: name})
	return int64(w.ExecutionContextID), err
}

// FrameOwner is the backend node id of the element (iframe, frame) that shows
// frame frameID in the page's session; 0 when the browser names none.
func (p *Page) FrameOwner(ctx context.Context, frameID string) (int64, error) {
	owner, err := proto.Call(ctx, p, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: proto.FrameID(frameID)})
	return int64(owner.BackendNodeID), err
}

// OOPIF is an out-of-process iframe that auto-attach attached: a frame that
// runs in another renderer process than its parent, reached through its own
// flattened session.
type OOPIF struct {
	// FrameID is the frame's id, which is also its target id.
	FrameID string
	// ParentFrameID is the frame of the attaching session that holds it.
	ParentFrameID string
	URL           string
	// Session is the frame's session, a child of the tab.
	Session *Page
}

// OOPIFAttach is auto-attach turned on on one session (AttachOOPIFs).
type OOPIFAttach struct {
	p      *Page
	events <-chan Event
	stop   func()
	done   chan struct{}
	err    error
}

// AttachOOPIFs listens for Target.attachedToTarget on the page's session and
// sends Target.setAutoAttach (flatten, no waiting for the debugger) without
// waiting for its answer, so that the round trip overlaps the caller's work:
// Started waits for it. Chrome reports the frames already there before it
// answers, then each new one as it appears; Next returns them. Close stops
// listening, Detach also turns auto-attach off.
func (p *Page) AttachOOPIFs(ctx context.Context) *OOPIFAttach {
	events, stop := On(p, target.AttachedToTarget)
	a := &OOPIFAttach{p: p, events: events, stop: stop, done: make(chan struct{})}
	go func() {
		_, a.err = proto.Call(ctx, p, target.SetAutoAttach, autoAttach(true))
		close(a.done)
	}()
	return a
}

func autoAttach(on bool) target.SetAutoAttachParams {
	return target.SetAutoAttachParams{AutoAttach: on, WaitForDebuggerOnStart: false, Flatten: new(true)}
}

// Started waits for the answer to Target.setAutoAttach: nil once auto-attach
// is on.
func (a *OOPIFAttach) Started() error {
	<-a.done
	return a.err
}

// Next returns the next out-of-process iframe attached (other targets, such as
// workers, are passed over). It returns nil, nil when expire fires first,
// ctx.Err() when ctx ends, and ErrConnClosed when the tab's connection ends.
func (a *OOPIFAttach) Next(ctx context.Context, expire <-chan time.Time) (*OOPIF, error) {
	for {
		select {
		case ev, ok := <-a.events:
			if !ok {
				return nil, ErrConnClosed
			}
			if o := a.oopif(ev); o != nil {
				return o, nil
			}
		case <-expire:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// oopif decodes a Target.attachedToTarget event; nil unless it is an iframe's.
func (a *OOPIFAttach) oopif(ev Event) *OOPIF {
	e, ok := Decode(target.AttachedToTarget, ev)
	if !ok || e.SessionID == "" || e.TargetInfo == nil || e.TargetInfo.Type != "iframe" {
		return nil
	}
	return &OOPIF{FrameID: string(e.TargetInfo.TargetID), ParentFrameID: string(e.TargetInfo.ParentFrameID), URL: e.TargetInfo.URL, Session: a.p.Child(string(e.SessionID))}
}

// Close stops listening. Auto-attach stays on and the frames attached stay
// attached, their sessions usable.
func (a *OOPIFAttach) Close() { a.stop() }

// Detach turns auto-attach off, which detaches the frames attached through it
// (so that a later auto-attach on the connection reports them again), and
// stops listening. Their sessions end: call it when done with them.
func (a *OOPIFAttach) Detach(ctx context.Context) {
	proto.Call(ctx, a.p, target.SetAutoAttach, autoAttach(false))
	a.stop()
}
