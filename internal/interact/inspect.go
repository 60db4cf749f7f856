package interact

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Item is one interactive element inspect lists.
type Item struct {
	Ref    string         `json:"ref"`
	Role   string         `json:"role"`
	Name   string         `json:"name,omitempty"`
	Tag    string         `json:"tag"`
	States map[string]any `json:"states,omitempty"`
	Hidden bool           `json:"hidden,omitempty"`
	Box    [4]int         `json:"box"`
	Ctx    string         `json:"ctx,omitempty"`
	Frame  string         `json:"frame,omitempty"`
}

// FrameRef is a frame inspect found elements in; Key (f1, f2 …) is what items
// carry, ID is the CDP frame id --frame accepts.
type FrameRef struct {
	Key string `json:"key"`
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Inspection is the outcome of Inspect.
type Inspection struct {
	URL    string
	Title  string
	Items  []Item
	Frames []FrameRef
	// Refs are to be stored in the session (StoreRefs) for later @eN use.
	Refs *TabRefs
}

// InspectOptions scope Inspect.
type InspectOptions struct {
	// In scopes the list to the subtree of the element it names (in the main
	// document or, with In.Frame, a frame).
	In *Locator
	// Within keeps the elements of the smallest container that holds both the
	// text and interactive elements (as Locator.Within).
	Within string
}

type inspectRes struct {
	Items []struct {
		Role   string     `json:"role"`
		Tag    string     `json:"tag"`
		Name   string     `json:"name"`
		Hidden bool       `json:"hidden"`
		Box    [4]float64 `json:"box"`
		Ctx    string     `json:"ctx"`
	} `json:"items"`
	States []map[string]any `json:"-"`
	URL    string           `json:"url"`
	Title  string           `json:"title"`
	Token  string           `json:"token"`
	Set    string           `json:"set"`
	Frames [][4]float64     `json:"frames"`
	Slots  []int            `json:"slots"`
}

// Inspect lists the interactive elements of the tab in document order,
// frames and open shadow roots included, each with a ref, its context and a
// box in the tab's viewport.
func (p *Page) Inspect(ctx context.Context, o InspectOptions) (*Inspection, error) {
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		ins, err := p.inspectOnce(ctx, o)
		if err == nil {
			return ins, nil
		}
		if !isGone(err) {
			return nil, err
		}
		last = err
		p.top = nil
		if !sleep(ctx, 25*time.Millisecond) {
			break
		}
	}
	return nil, wrapCDP(ctx, last)
}

func (p *Page) inspectOnce(ctx context.Context, o InspectOptions) (*Inspection, error) {
	root, err := p.topFrame(ctx)
	if err != nil {
		return nil, err
	}
	req := map[string]any{"op": "inspect", "nodes": true}
	if o.In != nil {
		in := *o.In
		if err := in.Validate(); err != nil {
			return nil, err
		}
		if in.Frame != "" {
			if root, err = p.frameNamed(ctx, in.Frame); err != nil {
				return nil, err
			}
		}
		req["in"] = in
	}
	if o.Within != "" {
		req["within"] = o.Within
	}
	ins := &Inspection{Refs: &TabRefs{At: time.Now().UTC()}}
	keys := map[*frame]string{}
	var rec func(f *frame, req map[string]any, depth int) error
	rec = func(f *frame, req map[string]any, depth int) error {
		if f.ctxID == 0 && !f.libUnkept {
			// The main world is every connection's: the document can keep
			// the elements for later commands (refs by index, see keptRef).
			req["keep"] = refsKeyFor(p.tabID, f.docObj)
		}
		var res inspectRes
		nodes, err := p.callDeep(ctx, f, "", req, &res)
		if err != nil {
			return err
		}
		f.url = res.URL
		if f == root {
			ins.URL, ins.Title = res.URL, res.Title
			ins.Refs.URL = res.URL
		}
		docIdx := int64(len(ins.Refs.Docs))
		ins.Refs.Docs = append(ins.Refs.Docs, RefDoc{Chain: f.chain(), Token: res.Token, Set: res.Set})
		frameNodes := res.frameStart()
		frameKey := ""
		if f.parent != nil {
			frameKey = keys[f]
		}
		ox, oy := f.offset()
		nItems := len(res.Items)
		mk := func(i int) Item {
			it := res.Items[i]
			item := Item{Role: it.Role, Name: it.Name, Tag: it.Tag, Hidden: it.Hidden, Ctx: it.Ctx, Frame: frameKey,
				Box: [4]int{round(it.Box[0] + ox), round(it.Box[1] + oy), round(it.Box[2]), round(it.Box[3])}}
			if i < len(res.States) && len(res.States[i]) > 0 {
				item.States = res.States[i]
			}
			ref := int64(0)
			if res.Set != "" {
				ref = -int64(i) - 1
			} else if i < len(nodes) {
				ref = nodes[i].BackendNodeID
			}
			ins.Refs.Refs = append(ins.Refs.Refs, [2]int64{ref, docIdx})
			item.Ref = refName(len(ins.Refs.Refs) - 1)
			return item
		}
		k := 0
		for fi := 0; fi <= len(res.Frames); fi++ {
			end := nItems
			if fi < len(res.Slots) {
				end = res.Slots[fi]
			}
			for ; k < end && k < nItems; k++ {
				ins.Items = append(ins.Items, mk(k))
			}
			if fi == len(res.Frames) || depth > 8 {
				continue
			}
			ni := frameNodes + fi
			if ni >= len(nodes) || nodes[ni].FrameID == "" {
				continue
			}
			c, err := p.child(ctx, f, nodes[ni].FrameID, nodes[ni].BackendNodeID, res.Frames[fi])
			if err != nil {
				if isGone(err) {
					continue
				}
				return err
			}
			keys[c] = fmt.Sprintf("f%d", len(ins.Frames)+1)
			ins.Frames = append(ins.Frames, FrameRef{Key: keys[c], ID: c.id})
			idx := len(ins.Frames) - 1
			if err := rec(c, map[string]any{"op": "inspect", "nodes": true}, depth+1); err != nil {
				if isGone(err) {
					continue
				}
				return err
			}
			ins.Frames[idx].URL = c.url
		}
		return nil
	}
	if err := rec(root, req, 0); err != nil {
		return nil, err
	}
	return ins, nil
}

// frameStart is where the frames start in the nodes of an inspect's answer:
// after the items, or at 0 when the document kept the items (Set).
func (r *inspectRes) frameStart() int {
	if r.Set != "" {
		return 0
	}
	return len(r.Items)
}

// UnmarshalJSON decodes the items and keeps each item's other keys as states.
func (r *inspectRes) UnmarshalJSON(b []byte) error {
	type plain inspectRes
	var x plain
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	var gen struct {
		Items []map[string]any `json:"items"`
	}
	json.Unmarshal(b, &gen)
	x.States = make([]map[string]any, len(gen.Items))
	for i, it := range gen.Items {
		for _, k := range []string{"role", "tag", "name", "hidden", "box", "ctx"} {
			delete(it, k)
		}
		x.States[i] = it
	}
	*r = inspectRes(x)
	return nil
}

// usualTags are the tags a role normally has; other tags are shown.
var usualTags = map[string][]string{
	"button": {"button", "input", "summary"}, "link": {"a", "area"}, "textbox": {"input", "textarea"}, "searchbox": {"input"},
	"checkbox": {"input"}, "radio": {"input"}, "switch": {"input"}, "combobox": {"select", "input"}, "listbox": {"select"},
	"spinbutton": {"input"}, "slider": {"input"}, "option": {"option"},
}

// Line is the compact one-line form of an item:
//
//	REF ROLE[ <tag>][ key=value…][ flag…][ frame=fN][ @x,y,wxh][: NAME]
//
// The tag shows only when the role does not imply it; states with value true
// print as bare flags (checked, disabled, required …); box only with boxes.
func (it Item) Line(boxes bool) string {
	var b strings.Builder
	b.WriteString(it.Ref)
	b.WriteByte(' ')
	b.WriteString(it.Role)
	usual := false
	for _, t := range usualTags[it.Role] {
		if t == it.Tag {
			usual = true
		}
	}
	if !usual {
		b.WriteString(" <" + it.Tag + ">")
	}
	keys := make([]string, 0, len(it.States))
	for k := range it.States {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return stateOrder(keys[i]) < stateOrder(keys[j]) })
	for _, k := range keys {
		if k == "type" && impliedType[it.Role] == it.States[k] {
			continue
		}
		switch v := it.States[k].(type) {
		case bool:
			if v {
				b.WriteString(" " + k)
			} else if k == "checked" {
				b.WriteString(" unchecked")
			} else if k == "expanded" {
				b.WriteString(" collapsed")
			}
		case string:
			b.WriteString(" " + k + "=" + quoteIfNeeded(v))
		default:
			j, _ := json.Marshal(v)
			b.WriteString(" " + k + "=" + string(j))
		}
	}
	if it.Hidden {
		b.WriteString(" hidden")
	}
	if it.Frame != "" {
		b.WriteString(" frame=" + it.Frame)
	}
	if boxes {
		fmt.Fprintf(&b, " @%d,%d,%dx%d", it.Box[0], it.Box[1], it.Box[2], it.Box[3])
	}
	if it.Name != "" {
		b.WriteString(": " + it.Name)
	}
	return b.String()
}

// impliedType is the input type a role already says.
var impliedType = map[string]any{"spinbutton": "number", "searchbox": "search", "checkbox": "checkbox", "radio": "radio", "slider": "range"}

func stateOrder(k string) int {
	for i, o := range []string{"type", "value", "checked", "selected", "pressed", "expanded", "multiple", "disabled", "readonly", "required"} {
		if o == k {
			return i
		}
	}
	return 99
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " :\"=@") {
		return strconv.Quote(s)
	}
	return s
}

// Lines is the compact listing: one line per item, and a "# CONTEXT" line
// before each run of items that share a context.
func (ins *Inspection) Lines(boxes bool) []string {
	out := make([]string, 0, len(ins.Items)+len(ins.Items)/2)
	ctx := ""
	for _, it := range ins.Items {
		if it.Ctx != ctx {
			if it.Ctx == "" {
				out = append(out, "#")
			} else {
				out = append(out, "# "+it.Ctx)
			}
			ctx = it.Ctx
		}
		out = append(out, it.Line(boxes))
	}
	return out
}
