package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// Element is what dtb reports about the element an action acted on: role and
// accessible name as the accessibility tree computes them, tag, box in the
// tab's viewport (CSS pixels, [x, y, width, height]), the frame when not the
// main document, and states (value, checked, disabled …).
type Element struct {
	Role  string     `json:"role"`
	Name  string     `json:"name,omitempty"`
	Tag   string     `json:"tag"`
	ID    string     `json:"id,omitempty"`
	Box   [4]int     `json:"box"`
	Frame *FrameInfo `json:"frame,omitempty"`
	// Ref is set when the element was named by a ref.
	Ref string `json:"ref,omitempty"`
	// States: type, value, checked, selected, pressed, expanded, disabled,
	// readonly, required (only when not empty or default).
	States map[string]any `json:"-"`
}

// MarshalJSON flattens States into the element object.
func (e Element) MarshalJSON() ([]byte, error) {
	type plain Element
	b, err := json.Marshal(plain(e))
	if err != nil || len(e.States) == 0 {
		return b, err
	}
	s, err := json.Marshal(e.States)
	if err != nil {
		return nil, err
	}
	return append(append(b[:len(b)-1], ','), s[1:]...), nil
}

// FrameInfo names the frame an element is in.
type FrameInfo struct {
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
}

// jsElement is the library's description of an element.
type jsElement struct {
	Role string     `json:"role"`
	Name string     `json:"name"`
	Tag  string     `json:"tag"`
	ID   string     `json:"id"`
	Box  [4]float64 `json:"box"`
}

func (p *Page) element(raw json.RawMessage, f *frame) *Element {
	if len(raw) == 0 {
		return nil
	}
	var d jsElement
	json.Unmarshal(raw, &d)
	var all map[string]any
	json.Unmarshal(raw, &all)
	for _, k := range []string{"role", "name", "tag", "id", "box"} {
		delete(all, k)
	}
	ox, oy := f.offset()
	e := &Element{Role: d.Role, Name: d.Name, Tag: d.Tag, ID: d.ID, States: all,
		Box: [4]int{round(d.Box[0] + ox), round(d.Box[1] + oy), round(d.Box[2]), round(d.Box[3])}}
	if f.parent != nil {
		e.Frame = &FrameInfo{ID: f.id, URL: f.url}
	}
	return e
}

func round(f float64) int {
	if f < 0 {
		return -int(-f + 0.5)
	}
	return int(f + 0.5)
}

// locateRes is the answer of the library's "locate" (and "ref") op.
type locateRes struct {
	N      int               `json:"n"`
	Hidden int               `json:"hidden"`
	URL    string            `json:"url"`
	Token  string            `json:"token"`
	Cands  []json.RawMessage `json:"cands"`
	Frames [][4]float64      `json:"frames"`
	Slots  []int             `json:"slots"`
	Act    json.RawMessage   `json:"act"`
	Target json.RawMessage   `json:"target"`
	Stale  string            `json:"stale"`
}

// match is one match found in some frame.
type match struct {
	f     *frame
	local int
	cand  json.RawMessage // its description when the library gave one
}

// found is the outcome of one locate pass over the tab.
type found struct {
	matches []match
	hidden  int
	// acted: the library acted in the same call (one match, no frames).
	acted  *acted
	frames int
}

type acted struct {
	f      *frame
	obj    string // the element's objectId (refs)
	loc    Locator
	nd     need
	local  int // the match's index in its frame
	act    json.RawMessage
	target json.RawMessage
	url    string
	token  string
}

// action is the page-side part of an action, sent to the library.
type action map[string]any

// need is what the action needs of the element: "visible" for mouse and
// keyboard input, "any" for DOM actions (hidden file inputs, checkboxes).
type need string

const (
	needVisible need = "visible"
	needAny     need = "any"
)

// search runs the locator in frame f and, recursively, in the frames in
// scope, merging their matches in document order. With act set and a certain
// pick (one match, or nth) in a frame without child frames, the library acts in
// the same call.
func (p *Page) search(ctx context.Context, f *frame, loc Locator, nd need, act action, depth int) (*found, error) {
	req := map[string]any{"op": "locate", "loc": loc, "need": nd, "cands": 5, "deep": true}
	if loc.Nth != NoNth {
		req["pick"] = loc.Nth
	}
	if act != nil && depth == 0 {
		req["act"] = act
	}
	var res locateRes
	nodes, err := p.callDeep(ctx, f, "", req, &res)
	if err != nil {
		return nil, err
	}
	f.url = res.URL
	out := &found{hidden: res.Hidden}
	if len(res.Frames) == 0 {
		for i := 0; i < res.N; i++ {
			m := match{f: f, local: i}
			if i < len(res.Cands) {
				m.cand = res.Cands[i]
			}
			out.matches = append(out.matches, m)
		}
		if len(res.Act) > 0 && string(res.Act) != "null" {
			local := 0
			if loc.Nth != NoNth {
				local = loc.Nth
			}
			out.acted = &acted{f: f, loc: loc, nd: nd, local: local, act: res.Act, target: res.Target, url: res.URL, token: res.Token}
		}
		return out, nil
	}
	if depth > 8 {
		return out, nil
	}
	// Frames in scope: search each, then merge at its slot.
	sub := make([][]match, len(res.Frames))
	for i, box := range res.Frames {
		if i >= len(nodes) || nodes[i].FrameID == "" {
			continue
		}
		c, err := p.child(ctx, f, nodes[i].FrameID, nodes[i].BackendNodeID, box)
		if err != nil {
			if isGone(err) {
				continue // a frame that is loading or went away holds no match
			}
			return nil, err
		}
		cf, err := p.search(ctx, c, Locator{CSS: loc.CSS, Text: loc.Text, Role: loc.Role, Name: loc.Name, Label: loc.Label, Placeholder: loc.Placeholder, Exact: loc.Exact, Nth: NoNth}, nd, nil, depth+1)
		if err != nil {
			if isGone(err) {
				continue
			}
			return nil, err
		}
		sub[i] = cf.matches
		out.hidden += cf.hidden
		out.frames += 1 + cf.frames
	}
	out.frames += len(res.Frames)
	k := 0
	for i := 0; i <= len(res.Frames); i++ {
		end := res.N
		if i < len(res.Slots) {
			end = res.Slots[i]
		}
		for ; k < end && k < res.N; k++ {
			m := match{f: f, local: k}
			if k < len(res.Cands) {
				m.cand = res.Cands[k]
			}
			out.matches = append(out.matches, m)
		}
		if i < len(sub) {
			out.matches = append(out.matches, sub[i]...)
		}
	}
	return out, nil
}

// LocateOptions tune Locate.
type LocateOptions struct {
	// Scroll scrolls the element into view first.
	Scroll bool
	// Hidden accepts an element that is not visible (e.g. a hidden input).
	Hidden bool
}

// Located is an element Locate found.
type Located struct {
	Element
	// PageBox is the box in the top document's coordinates (viewport box plus
	// the page's scroll offset), for clipping a full-page screenshot.
	PageBox [4]int `json:"-"`
}

// Locate finds the one element loc names, waiting (polling) until ctx's
// deadline for it to appear: no match fails no-match (exit 3), several fail
// ambiguous-match (exit 7) unless loc.Nth picks one. The box is in the tab's
// viewport, measured after the optional scroll.
func (p *Page) Locate(ctx context.Context, loc Locator, o LocateOptions) (*Located, error) {
	nd := needVisible
	if o.Hidden {
		nd = needAny
	}
	r, err := p.act(ctx, loc, nd, action{"kind": "box", "scroll": o.Scroll})
	if err != nil {
		return nil, err
	}
	var sc struct {
		Scroll [2]float64 `json:"scroll"`
	}
	top, _ := p.topFrame(ctx)
	p.callValue(ctx, top, "", map[string]any{"op": "info"}, &sc)
	l := &Located{Element: *r.Element}
	l.PageBox = [4]int{l.Box[0] + round(sc.Scroll[0]), l.Box[1] + round(sc.Scroll[1]), l.Box[2], l.Box[3]}
	return l, nil
}

// outcome is a located element with the page-side result of the action.
type outcome struct {
	Element *Element
	frame   *frame
	local   int    // index of the match in its frame (locators)
	obj     string // the element's objectId (refs)
	act     json.RawMessage
	url     string
	token   string
}

// pollEvery is how often a locator is retried while nothing matches.
func pollEvery(attempt int) time.Duration {
	switch {
	case attempt < 4:
		return 25 * time.Millisecond
	case attempt < 20:
		return 50 * time.Millisecond
	}
	return 100 * time.Millisecond
}

// actionWait bounds how long an action waits for a found element to become
// actionable (enabled, visible) before failing with the reason.
const actionWait = 2 * time.Second

// stableCover is how long a click waits for a cover that does not move (a
// consent banner) before failing covered; a moving cover, a moving target or
// a missing option is waited for until the deadline.
const stableCover = 400 * time.Millisecond

// margin is kept before ctx's deadline to report no-match rather than a bare
// timeout.
const margin = 150 * time.Millisecond

// act locates loc (strictly) and runs the page-side action on it.
func (p *Page) act(ctx context.Context, loc Locator, nd need, a action) (*outcome, error) {
	if err := loc.Validate(); err != nil {
		return nil, err
	}
	if loc.Ref != "" {
		return p.actRef(ctx, loc.Ref, nd, a)
	}
	var last *found
	var bw blockWait
	for attempt := 0; ; attempt++ {
		o, fd, err := p.actOnce(ctx, loc, nd, a)
		if err != nil && isGone(err) {
			p.top = nil // the document changed under us: start again
			if !sleep(ctx, 25*time.Millisecond) {
				return nil, output.Wrap("timeout", ctx.Err(), "locating "+loc.String())
			}
			continue
		}
		if err != nil {
			var be *blockedErr
			if !errors.As(err, &be) {
				return nil, err
			}
			// Found but not actionable yet: retry for a while.
			if bw.over(ctx, be, attempt) {
				return nil, be.err
			}
		} else if o != nil {
			return o, nil
		} else {
			last = fd
		}
		wait := pollEvery(attempt)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < margin+wait {
			if bw.last != nil {
				return nil, bw.last.err
			}
			return nil, noMatch(loc, last)
		}
		if !sleep(ctx, wait) {
			if bw.last != nil {
				return nil, bw.last.err
			}
			return nil, noMatch(loc, last)
		}
	}
}

// blockWait tracks how long an action has been blocked for the same reason.
type blockWait struct {
	since time.Time
	last  *blockedErr
}

// over records a block and says whether to give up: after the block's
// patience (actionWait when unset; until the deadline when negative), or
// when the deadline is near.
func (b *blockWait) over(ctx context.Context, be *blockedErr, attempt int) bool {
	if b.last == nil || output.AsError(b.last.err).Reason != output.AsError(be.err).Reason {
		b.since = time.Now()
	}
	b.last = be
	patience := be.patience
	if patience == 0 {
		patience = actionWait
	}
	if patience > 0 && time.Since(b.since) > patience {
		return true
	}
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < margin+pollEvery(attempt)
}

// blockedErr wraps an action failure that may clear up (covered, disabled,
// not visible yet), with how long to wait for it (0: actionWait; negative:
// until the deadline).
type blockedErr struct {
	err      error
	patience time.Duration
}

// untilDeadline is the patience of blocks that are waited for until --timeout.
const untilDeadline = -1

func (b *blockedErr) Error() string { return b.err.Error() }

func noMatch(loc Locator, last *found) error {
	e := output.Errorf("no-match", "nothing matches %s", loc.String()).With("locator", loc.String())
	if last != nil && last.hidden > 0 {
		e.Message += fmt.Sprintf(" (%d hidden or zero-size element(s) match; they cannot take input)", last.hidden)
		e.With("hidden", last.hidden)
	}
	return e
}

// actOnce is one pass: locate, check strictness, act. It returns (nil, found,
// nil) when nothing matches yet.
func (p *Page) actOnce(ctx context.Context, loc Locator, nd need, a action) (*outcome, *found, error) {
	root, err := p.rootFor(ctx, loc)
	if err != nil {
		return nil, nil, err
	}
	fd, err := p.search(ctx, root, loc, nd, a, 0)
	if err != nil {
		return nil, nil, err
	}
	n := len(fd.matches)
	if n == 0 || (loc.Nth != NoNth && loc.Nth >= n) {
		return nil, fd, nil
	}
	if n > 1 && loc.Nth == NoNth {
		return nil, nil, ambiguous(loc, fd)
	}
	var ac *acted
	if fd.acted != nil {
		ac = fd.acted
	} else {
		i := 0
		if loc.Nth != NoNth {
			i = loc.Nth
		}
		m := fd.matches[i]
		if err := p.bringFrameIntoView(ctx, m.f); err != nil {
			return nil, nil, err
		}
		ac, err = p.actIn(ctx, m.f, loc, nd, a, m.local)
		if err != nil {
			return nil, nil, err
		}
	}
	return p.finish(ctx, ac, a)
}

// actIn acts on the local-th match of loc in frame f.
func (p *Page) actIn(ctx context.Context, f *frame, loc Locator, nd need, a action, local int) (*acted, error) {
	l := loc
	l.Nth = NoNth
	req := map[string]any{"op": "locate", "loc": l, "need": nd, "act": a, "pick": local, "final": true}
	var res locateRes
	if err := p.callValue(ctx, f, "", req, &res); err != nil {
		return nil, err
	}
	if len(res.Act) == 0 || string(res.Act) == "null" {
		return nil, fmt.Errorf("%w: the match moved", errGone)
	}
	return &acted{f: f, loc: loc, nd: nd, local: local, act: res.Act, target: res.Target, url: res.URL, token: res.Token}, nil
}

// finish checks the page-side result: errors that may clear up are blocked,
// points in frames are mapped into the tab's viewport and hit-tested from the
// top through the frames.
func (p *Page) finish(ctx context.Context, ac *acted, a action) (*outcome, *found, error) {
	el := p.element(ac.target, ac.f)
	var r struct {
		Error    string          `json:"error"`
		Covering json.RawMessage `json:"covering"`
		Moving   bool            `json:"moving"`
		Missing  []string        `json:"missing"`
		X        *float64        `json:"x"`
		Y        *float64        `json:"y"`
	}
	json.Unmarshal(ac.act, &r)
	switch r.Error {
	case "":
	case "covered":
		be := &blockedErr{err: coveredErr(el, p.element(r.Covering, ac.f)), patience: stableCover}
		if r.Moving {
			be.patience = untilDeadline
		}
		return nil, nil, be
	case "moving":
		return nil, nil, &blockedErr{err: output.Errorf("not-stable", "%s is still moving (animated); it must keep the same box over two animation frames", describeEl(el)).With("element", el), patience: untilDeadline}
	case "disabled":
		return nil, nil, &blockedErr{err: output.Errorf("not-interactable", "%s is disabled", describeEl(el)).With("element", el)}
	case "no-pointer-events":
		return nil, nil, &blockedErr{err: output.Errorf("not-interactable", "%s takes no pointer events (pointer-events: none): a click would reach its container", describeEl(el)).With("element", el)}
	case "not-visible":
		return nil, nil, &blockedErr{err: output.Errorf("not-visible", "%s is not visible (no box in the viewport)", describeEl(el)).With("element", el)}
	case "no-option":
		// Options loaded late are common: wait for them until the deadline.
		o := &outcome{Element: el, act: ac.act}
		return nil, nil, &blockedErr{err: actError(o, "select in"), patience: untilDeadline}
	}
	o := &outcome{Element: el, frame: ac.f, local: ac.local, obj: ac.obj, act: ac.act, url: ac.url, token: ac.token}
	if a["kind"] == "point" && r.X != nil && r.Y != nil && ac.f.parent != nil {
		if err := p.boxAtTop(ctx, ac.f, el); err != nil {
			return nil, nil, err
		}
		pts, err := p.toTop(ctx, ac.f, *r.X, *r.Y, nil)
		if err != nil {
			return nil, nil, err
		}
		top := pts[len(pts)-1]
		if force, _ := a["force"].(bool); !force {
			obj := ac.obj
			if obj == "" {
				if obj, err = p.elementObject(ctx, ac.f, ac.loc, ac.nd, ac.local); err != nil {
					return nil, nil, err
				}
			}
			if err := p.hitAtTop(ctx, ac.f, obj, pts, el); err != nil {
				return nil, nil, err
			}
		}
		b, _ := json.Marshal(map[string]float64{"x": top.x, "y": top.y})
		o.act = b
	}
	return o, nil, nil
}

// elementObject is the objectId of the local-th match of loc in frame f.
func (p *Page) elementObject(ctx context.Context, f *frame, loc Locator, nd need, local int) (string, error) {
	l := loc
	l.Nth = NoNth
	r, err := p.call(ctx, f, "", map[string]any{"op": "element", "loc": l, "need": nd, "pick": local}, byObject)
	if err != nil {
		return "", err
	}
	if r.Subtype != "node" {
		return "", fmt.Errorf("%w: the match moved", errGone)
	}
	return r.ObjectID, nil
}

// bringFrameIntoView scrolls every frame owner of f into view, outermost
// first, and refreshes the frames' boxes.
func (p *Page) bringFrameIntoView(ctx context.Context, f *frame) error {
	var chain []*frame
	for g := f; g.parent != nil; g = g.parent {
		chain = append([]*frame{g}, chain...)
	}
	for _, g := range chain {
		obj, err := p.resolveNode(ctx, g.parent, g.owner)
		if err != nil {
			return err
		}
		var fb frameBoxRes
		if err := p.callValue(ctx, g.parent, obj, map[string]any{"op": "frameBox", "scroll": true}, &fb); err != nil {
			return err
		}
		g.box, g.local = fb.Box, fb.Local
	}
	return nil
}

func coveredErr(el, cover *Element) error {
	msg := fmt.Sprintf("%s is covered by %s", describeEl(el), describeEl(cover))
	e := output.Errorf("covered", "%s; close or dismiss it first, or use --force", msg).With("element", el)
	if cover != nil {
		e.With("covering", cover)
	}
	return e
}

// describeEl is a short human name for an element: role "name" <tag#id>.
func describeEl(e *Element) string {
	if e == nil {
		return "another element"
	}
	s := e.Role
	if e.Name != "" {
		s += fmt.Sprintf(" %q", clipName(e.Name, 40))
	}
	tag := e.Tag
	if e.ID != "" {
		tag += "#" + e.ID
	}
	return s + " <" + tag + ">"
}

func clipName(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func ambiguous(loc Locator, fd *found) error {
	n := len(fd.matches)
	var cands []*Element
	var lines []string
	for _, m := range fd.matches {
		if len(cands) == 5 {
			break
		}
		if m.cand == nil {
			continue
		}
		e := (&Page{}).element(m.cand, m.f)
		cands = append(cands, e)
		lines = append(lines, fmt.Sprintf("%s at [%d,%d %dx%d]", describeEl(e), e.Box[0], e.Box[1], e.Box[2], e.Box[3]))
	}
	msg := fmt.Sprintf("%d elements match %s; pick one with --nth N (from 0), narrow with --within TEXT or --exact, or use a ref from inspect", n, loc.String())
	if len(lines) > 0 {
		msg += ": " + strings.Join(lines, "; ")
		if n > len(lines) {
			msg += fmt.Sprintf("; … %d more", n-len(lines))
		}
	}
	return output.Errorf("ambiguous-match", "%s", msg).With("count", n).With("candidates", cands).With("locator", loc.String())
}

// rootFor is the frame a locator searches: the main document, or --frame's.
func (p *Page) rootFor(ctx context.Context, loc Locator) (*frame, error) {
	top, err := p.topFrame(ctx)
	if err != nil {
		return nil, err
	}
	if loc.Frame == "" {
		return top, nil
	}
	return p.frameNamed(ctx, loc.Frame)
}
