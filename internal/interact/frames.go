package interact

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/dtb-cli/dtb/internal/cdp"
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

// Frames lists the frames of the tab below the main one, in-process and
// out-of-process, depth first.
func (p *Page) Frames(ctx context.Context) ([]Frame, error) {
	var out []Frame
	seen := map[string]bool{}
	walkSession := func(s *cdp.Page) error {
		tree, err := s.FrameTree(ctx)
		if err != nil {
			return wrapCDP(ctx, err)
		}
		isOOPIF := s != p.tab
		var rec func(t *cdp.FrameTree, top bool)
		rec = func(t *cdp.FrameTree, top bool) {
			if !top && !seen[t.Frame.ID] {
				seen[t.Frame.ID] = true
				out = append(out, Frame{ID: t.Frame.ID, Parent: t.Frame.ParentID, Name: t.Frame.Name, URL: t.Frame.URL, OOPIF: isOOPIF})
			}
			for i := range t.ChildFrames {
				rec(&t.ChildFrames[i], false)
			}
		}
		rec(tree, !isOOPIF)
		if isOOPIF && len(out) > 0 {
			// The root of an OOPIF session is the OOPIF itself.
			root := tree.Frame
			for i := range out {
				if out[i].ID == root.ID {
					out[i].Name, out[i].URL = root.Name, root.URL
				}
			}
		}
		return nil
	}
	if err := walkSession(p.tab); err != nil {
		return nil, err
	}
	// Out-of-process frames: attach to each (auto-attach on the tab) and list
	// their own trees.
	oopifs, err := p.attachedBy(ctx, p.tab)
	if err != nil {
		return out, nil
	}
	for len(oopifs) > 0 {
		o := oopifs[0]
		oopifs = oopifs[1:]
		if !seen[o.FrameID] {
			seen[o.FrameID] = true
			out = append(out, Frame{ID: o.FrameID, Parent: o.ParentFrameID, URL: o.URL, OOPIF: true})
		}
		walkSession(o.Session)
		more, _ := p.attachedBy(ctx, o.Session)
		oopifs = append(oopifs, more...)
	}
	return out, nil
}

// attachedBy turns on auto-attach on session s and returns the out-of-process
// frames it attached so far.
func (p *Page) attachedBy(ctx context.Context, s *cdp.Page) ([]cdp.OOPIF, error) {
	if _, err := p.attachOOPIF(ctx, s, ""); err != nil {
		return nil, err
	}
	var out []cdp.OOPIF
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.oopifs {
		if o.parent == s {
			out = append(out, o.OOPIF)
		}
	}
	return out, nil
}

var hexID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9A-Fa-f]{16,64}$`) })

// frameNamed resolves --frame: a frame id (as inspect and action reports
// print it), else a frame's name attribute, else a substring of its URL.
func (p *Page) frameNamed(ctx context.Context, sel string) (*frame, error) {
	frames, err := p.Frames(ctx)
	if err != nil {
		return nil, err
	}
	var hits []Frame
	if hexID().MatchString(sel) {
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

func (f Frame) String() string { return fmt.Sprintf("%s (%s)", f.ID, f.URL) }
