package session

import (
	"context"
	"slices"
	"sort"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// CloseResult is what `dtb close` prints.
type CloseResult struct {
	Closed       []cdp.TabRef `json:"closed"`
	Workspace    string       `json:"workspace,omitempty"`
	WindowClosed bool         `json:"windowClosed,omitempty"`
	// Left lists tabs of the workspace's window dtb did not open (the window
	// stays open for them).
	Left       []cdp.TabRef `json:"left,omitempty"`
	CurrentTab *cdp.TabRef  `json:"currentTab"`
}

// CloseTab closes the selected tab (--tab, else the current tab) only when dtb
// created it; anything else is "not-owned" and stays open.
func (s *Session) CloseTab(ctx context.Context, tab string) (*CloseResult, error) {
	if _, err := s.Browser(ctx); err != nil {
		return nil, err
	}
	pages, err := s.ListPages(ctx)
	if err != nil {
		return nil, err
	}
	id, _, err := s.pick(TabSelector{Tab: tab, NoCreate: true}, pages)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, output.Errorf("no-such-tab", "no tab to close")
	}
	alias := s.state.AliasOf(id)
	if s.state.Tabs[id] == nil {
		e := output.Errorf("not-owned", "tab %s was not opened by dtb (or its bookkeeping expired); dtb closes only its own tabs", cdp.TabName(id, alias)).With("tab", id)
		if alias != "" {
			e.With("alias", alias)
		}
		return nil, e
	}
	if err := s.closeTarget(ctx, id); err != nil {
		return nil, cdp.WrapCDP(ctx, err, "closing the tab")
	}
	res := &CloseResult{Closed: []cdp.TabRef{{ID: id, Alias: alias}}}
	err = s.Update(ctx, func(st *State) error {
		ws := ""
		if t := st.Tabs[id]; t != nil {
			ws = t.Workspace
		}
		st.Forget(id)
		if w := st.Workspaces[ws]; w != nil && w.ActiveTab == "" {
			w.ActiveTab = latestTab(st, ws)
		}
		res.CurrentTab = currentRef(st)
		return nil
	})
	s.disposeUnused(ctx)
	return res, err
}

func latestTab(st *State, ws string) string {
	best := ""
	for id, t := range st.Tabs {
		if t.Workspace == ws && (best == "" || t.LastUse.After(st.Tabs[best].LastUse)) {
			best = id
		}
	}
	return best
}

func currentRef(st *State) *cdp.TabRef {
	if st.CurrentTab == "" {
		return nil
	}
	return &cdp.TabRef{ID: st.CurrentTab, Alias: st.AliasOf(st.CurrentTab)}
}

// CloseWorkspace closes the workspace's own tabs; its window closes with them
// unless it holds a tab dtb did not open, which is left alone (and listed).
func (s *Session) CloseWorkspace(ctx context.Context, name string) (*CloseResult, error) {
	if _, err := s.Browser(ctx); err != nil {
		return nil, err
	}
	w := s.state.Workspaces[name]
	if w == nil {
		return nil, output.Errorf("no-such-workspace", "no workspace %q in session %q", name, s.state.Name).With("workspace", name).With("workspaces", workspaceNames(s.state))
	}
	pages, err := s.ListPages(ctx)
	if err != nil {
		return nil, err
	}
	alive := map[string]bool{}
	for _, p := range pages {
		alive[p.ID] = true
	}
	res := &CloseResult{Workspace: name, Closed: []cdp.TabRef{}}
	var ids []string
	for id, t := range s.state.Tabs {
		if t.Workspace == name {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		if alive[id] {
			if err := s.closeTarget(ctx, id); err != nil {
				return nil, cdp.WrapCDP(ctx, err, "closing a workspace tab")
			}
		}
		res.Closed = append(res.Closed, cdp.TabRef{ID: id, Alias: s.state.AliasOf(id)})
	}
	// Whatever else is in the window stays.
	closedSet := map[string]bool{}
	for _, id := range ids {
		closedSet[id] = true
	}
	if w.Window != 0 {
		for _, p := range pages {
			if !closedSet[p.ID] && s.windowOf(ctx, p.ID) == w.Window {
				res.Left = append(res.Left, cdp.TabRef{ID: p.ID, Alias: s.state.AliasOf(p.ID)})
			}
		}
	} else if w.BrowserContext != "" {
		for _, p := range pages {
			if !closedSet[p.ID] && p.BrowserContextID == w.BrowserContext {
				res.Left = append(res.Left, cdp.TabRef{ID: p.ID, Alias: s.state.AliasOf(p.ID)})
			}
		}
	}
	res.WindowClosed = len(res.Left) == 0
	err = s.Update(ctx, func(st *State) error {
		for _, id := range ids {
			st.Forget(id)
		}
		delete(st.Workspaces, name)
		res.CurrentTab = currentRef(st)
		return nil
	})
	s.disposeUnused(ctx)
	return res, err
}

// disposeUnused disposes incognito browser contexts dtb created that no tab
// uses any more.
func (s *Session) disposeUnused(ctx context.Context) {
	b := s.state.Browser
	if b == nil {
		return
	}
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return
	}
	res, err := proto.Call(ctx, c.Target(""), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return
	}
	used := map[proto.BrowserContextID]bool{}
	for _, t := range res.TargetInfos {
		if t != nil && t.Type == "page" {
			used[t.BrowserContextID] = true
		}
	}
	ctxs, err := proto.Call(ctx, c.Target(""), target.GetBrowserContexts, proto.Empty{})
	if err != nil {
		return
	}
	// Only contexts this session created are candidates: dtb never disposes a
	// context of the user's.
	var gone []string
	for _, id := range ctxs.BrowserContextIDs {
		if !used[id] && slices.Contains(s.state.Contexts, string(id)) {
			if _, err := proto.Call(ctx, c.Target(""), target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: id}); err == nil {
				gone = append(gone, string(id))
			}
		}
	}
	if len(gone) > 0 {
		s.Update(ctx, func(st *State) error {
			st.Contexts = slices.DeleteFunc(st.Contexts, func(id string) bool { return slices.Contains(gone, id) })
			return nil
		})
	}
}
