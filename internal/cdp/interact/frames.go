package interact

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/dtb-cli/dtb/internal/output"
)

// Frame is one frame of the tab, as --frame selects it and inspect lists it.
type Frame struct {
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
	Name   string `json:"name,omitempty"`
	URL    string `json:"url"`
	// OOPIF: the frame runs in another renderer process.
	OOPIF bool `json:"oopif,omitempty"`
}

type frameTree struct {
	Frame struct {
		ID       string `json:"id"`
		ParentID string `json:"parentId"`
		Name     string `json:"name"`
		URL      string `json:"url"`
	} `json:"frame"`
	ChildFrames []frameTree `json:"childFrames"`
}

// Frames lists the frames of the tab below the main one, in-process and
// out-of-process, depth first.
func (p *Page) Frames(ctx context.Context) ([]Frame, error) {
	var out []Frame
	seen := map[string]bool{}
	var walkSession func(session string) error
	walkSession = func(session string) error {
		var ft struct {
			FrameTree frameTree `json:"frameTree"`
		}
		if err := p.tab.CallSession(ctx, session, "Page.getFrameTree", nil, &ft); err != nil {
			return wrapCDP(ctx, err)
		}
		var rec func(t frameTree, top bool)
		rec = func(t frameTree, top bool) {
			if !top && !seen[t.Frame.ID] {
				seen[t.Frame.ID] = true
				out = append(out, Frame{ID: t.Frame.ID, Parent: t.Frame.ParentID, Name: t.Frame.Name, URL: t.Frame.URL, OOPIF: session != ""})
			}
			for _, c := range t.ChildFrames {
				rec(c, false)
			}
		}
		rec(ft.FrameTree, session == "")
		if session != "" && len(out) > 0 {
			// The root of an OOPIF session is the OOPIF itself.
			root := ft.FrameTree.Frame
			for i := range out {
				if out[i].ID == root.ID {
					out[i].Name, out[i].URL = root.Name, root.URL
				}
			}
		}
		return nil
	}
	if err := walkSession(""); err != nil {
		return nil, err
	}
	// Out-of-process frames: attach to each (auto-attach on the tab) and list
	// their own trees.
	oopifs, err := p.oopifs(ctx, "")
	if err != nil {
		return out, nil
	}
	for len(oopifs) > 0 {
		o := oopifs[0]
		oopifs = oopifs[1:]
		if !seen[o.id] {
			seen[o.id] = true
			out = append(out, Frame{ID: o.id, Parent: o.parentFrame, URL: o.url, OOPIF: true})
		}
		walkSession(o.session)
		more, _ := p.oopifs(ctx, o.session)
		oopifs = append(oopifs, more...)
	}
	return out, nil
}

type oopif struct {
	id, session, parentFrame, url string
}

// oopifs turns on auto-attach on session and returns the out-of-process
// frames attached so far.
func (p *Page) oopifs(ctx context.Context, session string) ([]oopif, error) {
	if _, err := p.attachOOPIF(ctx, session, ""); err != nil {
		return nil, err
	}
	var out []oopif
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, sid := range p.sessions {
		if info, ok := p.infos[id]; ok && info.parentSession == session {
			out = append(out, oopif{id: id, session: sid, parentFrame: info.parentFrame, url: info.url})
		}
	}
	return out, nil
}

var hexID = regexp.MustCompile(`^[0-9A-Fa-f]{16,64}$`)

// frameNamed resolves --frame: a frame id (as inspect and action reports
// print it), else a frame's name attribute, else a substring of its URL.
func (p *Page) frameNamed(ctx context.Context, sel string) (*frame, error) {
	frames, err := p.Frames(ctx)
	if err != nil {
		return nil, err
	}
	var hits []Frame
	if hexID.MatchString(sel) {
		for _, f := range frames {
			if strings.EqualFold(f.ID, sel) {
				hits = append(hits, f)
			}
		}
	}
	if len(hits) == 0 {
		for _, f := range frames {
			if f.Name == sel {
				hits = append(hits, f)
			}
		}
	}
	if len(hits) == 0 {
		for _, f := range frames {
			if strings.Contains(f.URL, sel) {
				hits = append(hits, f)
			}
		}
	}
	switch {
	case len(hits) == 0:
		return nil, output.Errorf("no-match", "no frame matches --frame %q (give a frame id from inspect, a frame name, or part of its URL)", sel).With("frames", frames)
	case len(hits) > 1:
		return nil, output.Errorf("ambiguous-match", "%d frames match --frame %q; give its id", len(hits), sel).With("count", len(hits)).With("candidates", hits)
	}
	// The chain of frame ids from below the top down to the frame.
	byID := map[string]Frame{}
	for _, f := range frames {
		byID[f.ID] = f
	}
	var chain []string
	for id := hits[0].ID; id != "" && id != p.tabID; id = byID[id].Parent {
		chain = append([]string{id}, chain...)
		if len(chain) > 16 {
			break
		}
	}
	f, err := p.frameByChain(ctx, chain)
	if err != nil && isGone(err) {
		return nil, output.Errorf("no-match", "frame %q is not available: %v", sel, err)
	}
	return f, err
}

type attachInfo struct {
	parentSession, parentFrame, url string
}

func (p *Page) noteAttach(session string, params json.RawMessage) {
	var a struct {
		SessionID  string `json:"sessionId"`
		TargetInfo struct {
			TargetID      string `json:"targetId"`
			Type          string `json:"type"`
			URL           string `json:"url"`
			ParentFrameID string `json:"parentFrameId"`
		} `json:"targetInfo"`
	}
	if json.Unmarshal(params, &a) != nil || a.SessionID == "" || a.TargetInfo.Type != "iframe" {
		return
	}
	p.mu.Lock()
	p.sessions[a.TargetInfo.TargetID] = a.SessionID
	if p.infos == nil {
		p.infos = map[string]attachInfo{}
	}
	p.infos[a.TargetInfo.TargetID] = attachInfo{parentSession: session, parentFrame: a.TargetInfo.ParentFrameID, url: a.TargetInfo.URL}
	p.mu.Unlock()
}

func (f Frame) String() string { return fmt.Sprintf("%s (%s)", f.ID, f.URL) }
