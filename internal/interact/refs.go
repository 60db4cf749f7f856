package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// RefSet is what the session file keeps of inspect's refs (State.Refs): per
// tab, the refs of its last inspect. A ref eN is bound to its tab, to the
// document it was read from (the frame chain and a document token that a
// navigation or reload changes) and to its node (backendNodeId).
type RefSet struct {
	V    int                 `json:"v"`
	Tabs map[string]*TabRefs `json:"tabs"`
}

// TabRefs are the refs of one tab: Refs[i] is e(i+1) as [node, index into
// Docs], where node is the element's backendNodeId, or -(k+1) for element k
// of the set its document kept (RefDoc.Set).
type TabRefs struct {
	At   time.Time  `json:"at"`
	URL  string     `json:"url,omitempty"`
	Docs []RefDoc   `json:"docs"`
	Refs [][2]int64 `json:"refs"`
}

// RefDoc is one document refs point into: the frame chain from the main frame
// (empty for the main document) and its document token.
type RefDoc struct {
	Chain []string `json:"chain,omitempty"`
	Token string   `json:"token"`
	// Set names the elements the document kept of the inspect (main-world
	// documents; see keepRefs in js/inspect.js).
	Set string `json:"set,omitempty"`
}

// maxRefTabs bounds how many tabs keep refs in the session file.
const maxRefTabs = 16

// LoadRefs reads the refs of a session state (an empty set when none).
func LoadRefs(st *session.State) *RefSet {
	rs := &RefSet{V: 1, Tabs: map[string]*TabRefs{}}
	if st == nil || len(st.Refs) == 0 {
		return rs
	}
	var in RefSet
	if json.Unmarshal(st.Refs, &in) == nil && in.V == 1 && in.Tabs != nil {
		return &in
	}
	return rs
}

// StoreRefs replaces one tab's refs in st (under the caller's session lock),
// dropping the refs of the least recently inspected tabs beyond maxRefTabs.
func StoreRefs(st *session.State, tabID string, tr *TabRefs) {
	rs := LoadRefs(st)
	rs.Tabs[tabID] = tr
	if len(rs.Tabs) > maxRefTabs {
		ids := make([]string, 0, len(rs.Tabs))
		for id := range rs.Tabs {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return rs.Tabs[ids[i]].At.After(rs.Tabs[ids[j]].At) })
		for _, id := range ids[maxRefTabs:] {
			delete(rs.Tabs, id)
		}
	}
	b, _ := json.Marshal(rs)
	st.Refs = b
}

func refIndex(ref string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(ref, "@"), "e"))
	if err != nil {
		return -1
	}
	return n - 1
}

// resolveRef finds the node a ref names, or fails stale-ref / no-such-ref.
func (p *Page) resolveRef(ctx context.Context, ref string) (*frame, string, RefDoc, error) {
	ref = strings.TrimPrefix(ref, "@")
	var tr *TabRefs
	if p.Refs != nil {
		tr = p.Refs.Tabs[p.tabID]
	}
	if tr == nil {
		return nil, "", RefDoc{}, output.Errorf("no-such-ref", "no refs for this tab: run dtb inspect on it first").With("ref", ref)
	}
	i := refIndex(ref)
	if i < 0 || i >= len(tr.Refs) {
		return nil, "", RefDoc{}, output.Errorf("no-such-ref", "the last inspect of this tab listed e1…e%d, not %s", len(tr.Refs), ref).With("ref", ref)
	}
	r := tr.Refs[i]
	if int(r[1]) >= len(tr.Docs) {
		return nil, "", RefDoc{}, output.Errorf("no-such-ref", "ref %s is damaged in the session file; run inspect again", ref)
	}
	doc := tr.Docs[r[1]]
	stale := func(why string) error {
		return output.Errorf("stale-ref", "%s is stale: %s since the inspect at %s; run dtb inspect again", ref, why, tr.At.Local().Format("15:04:05")).
			With("ref", ref).With("inspectedUrl", tr.URL)
	}
	f, err := p.frameByChain(ctx, doc.Chain)
	if err != nil {
		if isGone(err) {
			return nil, "", doc, stale("its frame is gone")
		}
		return nil, "", doc, err
	}
	var obj string
	if r[0] < 0 {
		obj, err = p.keptRef(ctx, f, doc.Set, -r[0]-1)
	} else {
		obj, err = p.resolveNode(ctx, f, r[0])
	}
	if err != nil {
		if errors.Is(err, errSetLost) {
			return nil, "", doc, stale("the page no longer holds what that inspect listed")
		}
		if isGone(err) {
			return nil, "", doc, stale("its element left the document")
		}
		return nil, "", doc, err
	}
	return f, obj, doc, nil
}

// actRef runs the page-side action on the element a ref names. The node must
// still be in the document it was inspected in: dtb never acts on another.
func (p *Page) actRef(ctx context.Context, ref string, nd need, a action) (*outcome, error) {
	var bw blockWait
	for attempt := 0; ; attempt++ {
		f, obj, doc, err := p.resolveRef(ctx, ref)
		if err != nil {
			return nil, err
		}
		var res locateRes
		req := map[string]any{"op": "ref", "token": doc.Token, "need": nd, "act": a}
		if err := p.callValue(ctx, f, obj, req, &res); err != nil {
			if isGone(err) {
				return nil, output.Errorf("stale-ref", "%s is stale: its document changed; run dtb inspect again", ref).With("ref", ref)
			}
			return nil, err
		}
		switch res.Stale {
		case "detached":
			return nil, output.Errorf("stale-ref", "%s is stale: its element left the document; run dtb inspect again", ref).With("ref", ref)
		case "document":
			return nil, output.Errorf("stale-ref", "%s is stale: the page navigated or reloaded since the inspect; run dtb inspect again", ref).With("ref", ref)
		}
		var o *outcome
		if res.N == 0 {
			err = &blockedErr{err: output.Errorf("not-visible", "%s is hidden or has no size", ref).With("ref", ref)}
		} else {
			ac := &acted{f: f, obj: obj, act: res.Act, target: res.Target, url: res.URL, token: res.Token}
			if f.parent != nil {
				if err = p.bringFrameIntoView(ctx, f); err == nil && a["kind"] == "point" {
					// Measure again now that the frame is in view.
					err = p.callValue(ctx, f, obj, req, &res)
					ac.act, ac.target = res.Act, res.Target
				}
			}
			if err == nil {
				o, _, err = p.finish(ctx, ac, a)
			}
		}
		if err == nil {
			o.Element.Ref = ref
			return o, nil
		}
		be, ok := err.(*blockedErr)
		if !ok {
			return nil, err
		}
		if bw.over(ctx, be, attempt) || !sleep(ctx, pollEvery(attempt)) {
			return nil, be.err
		}
	}
}

// refName is e(i+1).
func refName(i int) string { return fmt.Sprintf("e%d", i+1) }

// keptRef is the object id of element i of the set its document kept at the
// inspect; errGone when the element or the set is gone (a new document, or
// the document's record replaced).
func (p *Page) keptRef(ctx context.Context, f *frame, set string, i int64) (string, error) {
	r, err := p.call(ctx, f, "", map[string]any{"op": "keptRef", "key": refsKeyFor(p.tabID, f.docObj), "set": set, "i": i}, byObject)
	if err != nil {
		return "", err
	}
	if r.Subtype != "node" {
		if string(r.Value) == `"lost"` {
			return "", errSetLost
		}
		return "", fmt.Errorf("%w: kept ref %s", errGone, r.Value)
	}
	return r.ObjectID, nil
}

// errSetLost: the document no longer holds the inspect's elements (too many
// inspects of the tab since, or the page removed dtb's record).
var errSetLost = fmt.Errorf("%w: the inspect's elements are no longer kept", errGone)
