package session

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// TabSelector says which tab a page command acts on: Tab (an id, an alias such
// as t3, or a unique id prefix), else the active tab of Workspace, else the
// session's current tab, else the browser's visible page (the first page
// target), else a new about:blank tab dtb owns (unless NoCreate).
type TabSelector struct {
	Tab       string
	Workspace string
	NoCreate  bool
}

// isFullID reports whether s is a complete target id (32 upper-case hex digits).
func isFullID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'A' || r > 'F') {
			return false
		}
	}
	return true
}

// isAlias reports whether s has the form of a tab alias (t1, t2, …).
func isAlias(s string) bool { return len(s) > 1 && s[0] == 't' && browser.IsDigits(s[1:]) }

// renewEvery limits how often using an owned tab rewrites the session file.
const renewEvery = time.Minute

// ListPages lists the browser's page targets (type "page" only).
func (s *Session) ListPages(ctx context.Context) ([]browser.TargetInfo, error) {
	b, err := s.Browser(ctx)
	if err != nil {
		return nil, err
	}
	if b.Endpoint != "" {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
		pages, err := browser.ListPagesHTTP(s.tlsCtx(cctx), b.Endpoint, s.cfg.Headers)
		cancel()
		if browser.Refused(err) != 0 {
			return nil, browser.Unauthorized(err, b.Endpoint)
		}
		if err != nil {
			return nil, output.Wrap("browser-gone", err, "cannot list the browser's tabs").With("endpoint", b.Endpoint)
		}
		return pages, nil
	}
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return nil, err
	}
	res, err := proto.Call(ctx, c.Target(""), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, output.Wrap("browser-gone", err, "cannot list the browser's tabs")
	}
	var pages []browser.TargetInfo
	for _, t := range res.TargetInfos {
		if t != nil && t.Type == "page" {
			pages = append(pages, browser.TargetInfo{ID: string(t.TargetID), Type: t.Type, Title: t.Title, URL: t.URL, BrowserContextID: string(t.BrowserContextID)})
		}
	}
	return pages, nil
}

// Page connects to the tab sel selects. The hot path (a known tab of a browser
// with a discovery endpoint) reads the session file and dials the tab's own
// websocket, nothing else; anything unusual takes the slow path, which checks
// (and if needed replaces) the browser and lists its tabs.
func (s *Session) Page(ctx context.Context, sel TabSelector) (*cdp.Page, error) {
	if b := s.fastBrowser(); b != nil && b.Endpoint != "" {
		if id := s.quickTarget(sel); id != "" {
			p, err := s.dialPage(ctx, b, id)
			if err == nil {
				s.touch(ctx, id, false)
				return p, nil
			}
			if ctx.Err() != nil {
				return nil, output.Wrap("timeout", ctx.Err(), "connecting to the tab")
			}
			var he *cdp.HandshakeError
			if !errors.As(err, &he) {
				s.checked = false // the browser did not answer: let Browser() re-check it
			}
		}
	}
	b, err := s.Browser(ctx)
	if err != nil {
		return nil, err
	}
	listed := time.Now()
	pages, err := s.ListPages(ctx)
	if err != nil {
		return nil, err
	}
	seen := s.state.CurrentTab
	id, pin, err := s.pick(sel, pages)
	if err != nil {
		return nil, err
	}
	s.prune(ctx, pages, listed)
	if id == "" {
		if sel.NoCreate {
			return nil, output.Errorf("no-such-tab", "the browser has no open tab")
		}
		t, err := s.NewTab(ctx, NewTabOptions{})
		if err != nil {
			return nil, err
		}
		if err := s.Update(ctx, func(st *State) error {
			st.Own(t.ID, "", "", time.Now().UTC())
			st.CurrentTab = t.ID
			return nil
		}); err != nil {
			return nil, err
		}
		id = t.ID
	}
	p, err := s.attach(ctx, b, id)
	if err != nil {
		return nil, err
	}
	s.touchOver(ctx, id, pin, seen)
	return p, nil
}

// quickTarget resolves a selector from the session file alone ("" when the
// target list is needed).
func (s *Session) quickTarget(sel TabSelector) string {
	st := s.state
	switch {
	case sel.Tab != "":
		if id, ok := st.Aliases[sel.Tab]; ok {
			return id
		}
		if isFullID(sel.Tab) {
			return sel.Tab
		}
		return ""
	case sel.Workspace != "":
		if w := st.Workspaces[sel.Workspace]; w != nil {
			return w.ActiveTab
		}
		return ""
	}
	return st.CurrentTab
}

// pick applies the selection rules to the listed pages. pin is true when the
// chosen tab should become the session's current tab.
func (s *Session) pick(sel TabSelector, pages []browser.TargetInfo) (id string, pin bool, err error) {
	st := s.state
	alive := map[string]bool{}
	for _, p := range pages {
		alive[p.ID] = true
	}
	switch {
	case sel.Tab != "":
		id, err := ResolveTab(st, sel.Tab, pages)
		return id, false, err
	case sel.Workspace != "":
		w := st.Workspaces[sel.Workspace]
		if w == nil {
			return "", false, output.Errorf("no-such-workspace", "no workspace %q in session %q", sel.Workspace, st.Name).With("workspace", sel.Workspace).With("workspaces", workspaceNames(st))
		}
		if alive[w.ActiveTab] {
			return w.ActiveTab, false, nil
		}
		best, bestUse := "", time.Time{}
		for tid, t := range st.Tabs {
			if t.Workspace == sel.Workspace && alive[tid] && t.LastUse.After(bestUse) {
				best, bestUse = tid, t.LastUse
			}
		}
		if best == "" {
			return "", false, output.Errorf("no-such-tab", "workspace %q has no open tab", sel.Workspace).With("workspace", sel.Workspace)
		}
		return best, false, nil
	}
	if alive[st.CurrentTab] {
		return st.CurrentTab, false, nil
	}
	if len(pages) > 0 {
		return pages[0].ID, true, nil
	}
	return "", true, nil
}

// ResolveTab finds the tab a --tab value names among pages: an exact id, an
// alias of the session, or a unique (case-insensitive) id prefix.
func ResolveTab(st *State, sel string, pages []browser.TargetInfo) (string, error) {
	for _, p := range pages {
		if p.ID == sel {
			return p.ID, nil
		}
	}
	if id, ok := st.Aliases[sel]; ok {
		for _, p := range pages {
			if p.ID == id {
				return id, nil
			}
		}
		return "", output.Errorf("no-such-tab", "tab %s (%s) is closed", sel, cdp.ShortID(id)).With("tab", sel)
	}
	if isAlias(sel) {
		return "", output.Errorf("no-such-tab", "no tab with alias %s in session %q", sel, st.Name).With("tab", sel)
	}
	var matches []string
	up := strings.ToUpper(sel)
	for _, p := range pages {
		if strings.HasPrefix(p.ID, up) {
			matches = append(matches, p.ID)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", output.Errorf("no-such-tab", "no tab %q", sel).With("tab", sel)
	}
	return "", output.Errorf("ambiguous-tab", "tab prefix %q matches %d tabs", sel, len(matches)).With("tab", sel).With("candidates", matches)
}

func workspaceNames(st *State) []string {
	names := make([]string, 0, len(st.Workspaces))
	for n := range st.Workspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// touch renews an owned tab's bookkeeping (at most once a minute), pins the
// current tab, and sweeps expired entries; it writes only when something changes.
// pin was decided on the state this process read: when another dtb has changed
// the current tab since (e.g. an open that made its new tab current while this
// command listed the tabs), that newer choice stands.
func (s *Session) touch(ctx context.Context, id string, pin bool) {
	s.touchOver(ctx, id, pin, s.state.CurrentTab)
}

// touchOver is touch with pin applying only while the file's current tab is
// still seen (or none).
func (s *Session) touchOver(ctx context.Context, id string, pin bool, seen string) {
	now := time.Now().UTC()
	st := s.state
	t := st.Tabs[id]
	need := pin && st.CurrentTab != id
	need = need || (t != nil && now.Sub(t.LastUse) > renewEvery) || st.needsSweep(now)
	if !need {
		return
	}
	s.Update(ctx, func(st *State) error {
		if t := st.Tabs[id]; t != nil {
			t.LastUse = now
		}
		if pin && (st.CurrentTab == seen || st.CurrentTab == "") {
			st.CurrentTab = id
			st.EnsureAlias(id)
		}
		return nil
	})
}

// prune forgets tabs, aliases and workspace pointers of targets that no longer
// exist. Entries created after the listing started are kept (another dtb may
// have just opened them).
func (s *Session) prune(ctx context.Context, pages []browser.TargetInfo, listed time.Time) {
	alive := map[string]bool{}
	for _, p := range pages {
		alive[p.ID] = true
	}
	stale := func(st *State) []string {
		var ids []string
		seen := map[string]bool{}
		for id, t := range st.Tabs {
			if !alive[id] && t.Created.Before(listed) {
				ids = append(ids, id)
				seen[id] = true
			}
		}
		for _, id := range st.Aliases {
			if !alive[id] && st.Tabs[id] == nil && !seen[id] {
				ids = append(ids, id)
				seen[id] = true
			}
		}
		if st.CurrentTab != "" && !alive[st.CurrentTab] && !seen[st.CurrentTab] {
			if t := st.Tabs[st.CurrentTab]; t == nil || t.Created.Before(listed) {
				ids = append(ids, st.CurrentTab)
			}
		}
		return ids
	}
	if len(stale(s.state)) == 0 {
		return
	}
	s.Update(ctx, func(st *State) error {
		for _, id := range stale(st) {
			st.Forget(id)
		}
		return nil
	})
}

// pageWSURL is the websocket of one tab on a discovery endpoint.
func pageWSURL(endpoint, id string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	scheme := "ws"
	if u.Scheme == "https" {
		scheme = "wss"
	}
	return browser.WithQuery(scheme+"://"+u.Host+"/devtools/page/"+id, u.RawQuery)
}

func (s *Session) dialPage(ctx context.Context, b *browser.BrowserInfo, id string) (*cdp.Page, error) {
	if id == s.launchTab {
		s.launchTab = "" // in use now: no later open of this process takes it over
	}
	c, err := s.dialPooled(ctx, pageWSURL(b.Endpoint, id))
	if err != nil {
		return nil, err
	}
	st := s.state
	_, owned := st.Tabs[id]
	p := cdp.NewPage(c, id, "")
	p.Alias, p.Owned = st.AliasOf(id), owned
	return p, nil
}

// attach connects to a tab: its own websocket when the browser has a discovery
// endpoint, else a flattened session through the browser websocket.
func (s *Session) attach(ctx context.Context, b *browser.BrowserInfo, id string) (*cdp.Page, error) {
	if id == s.launchTab {
		s.launchTab = ""
	}
	if b.Endpoint != "" {
		p, err := s.dialPage(ctx, b, id)
		if err != nil {
			var he *cdp.HandshakeError
			if errors.As(err, &he) && he.Status >= 400 {
				return nil, output.Wrap("no-such-tab", err, "tab "+cdp.ShortID(id)+" is gone").With("tab", id)
			}
			if ctx.Err() != nil {
				return nil, output.Wrap("timeout", ctx.Err(), "connecting to the tab")
			}
			return nil, output.Wrap("browser-gone", err, "cannot connect to the tab").With("tab", id)
		}
		return p, nil
	}
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return nil, err
	}
	res, err := proto.Call(ctx, c.Target(""), target.AttachToTarget, target.AttachToTargetParams{TargetID: target.ID(id), Flatten: new(true)})
	if err != nil {
		return nil, output.Wrap("no-such-tab", err, "cannot attach to tab "+cdp.ShortID(id)).With("tab", id)
	}
	st := s.state
	_, owned := st.Tabs[id]
	p := cdp.NewPage(c, id, string(res.SessionID))
	p.Alias, p.Owned = st.AliasOf(id), owned
	return p, nil
}

// NewTabOptions configure NewTab.
type NewTabOptions struct {
	URL            string // initial URL; "" for about:blank
	NewWindow      bool   // a new window (workspace), unfocused, sized for the viewport
	BrowserContext string // an incognito browser context
	Width, Height  int    // window size with NewWindow
}

// newTabByHTTP: a tab can be made with PUT /json/new, whose query is the
// URL to open, so not on a service that takes its token in the query (the
// token would become part of the URL): Target.createTarget then.
func newTabByHTTP(b *browser.BrowserInfo) bool {
	return b.Endpoint != "" && !strings.Contains(b.Endpoint, "?")
}

// NewTab creates a tab (it does not record ownership; callers do, in the same
// Update that makes it current). A plain tab goes through the discovery
// endpoint's PUT /json/new when there is one, else Target.createTarget.
func (s *Session) NewTab(ctx context.Context, o NewTabOptions) (*browser.TargetInfo, error) {
	b, err := s.Browser(ctx)
	if err != nil {
		return nil, err
	}
	u := o.URL
	if u == "" {
		u = "about:blank"
	}
	if !o.NewWindow && s.sizeTabs(b) {
		// The browser's windows do not give the viewport asked for: the tab
		// gets a window of its own, sized for it (the headless shell sizes
		// the tab itself). No emulation: it would end with dtb's connection.
		o.NewWindow = true
	}
	if o.NewWindow && o.Width == 0 {
		o.Width, o.Height = windowFor(b, s.viewport())
	}
	if newTabByHTTP(b) && !o.NewWindow && o.BrowserContext == "" {
		var t browser.TargetInfo
		if err := browser.HTTPJSON(s.tlsCtx(ctx), http.MethodPut, b.Endpoint, "/json/new?"+url.QueryEscape(u), s.cfg.Headers, &t); err == nil && t.ID != "" {
			return &t, nil
		}
	}
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return nil, err
	}
	params := target.CreateTargetParams{URL: u, BrowserContextID: proto.BrowserContextID(o.BrowserContext)}
	if o.NewWindow {
		params.NewWindow, params.Background = new(true), new(true)
		if o.Width > 0 {
			params.Width, params.Height = int64(o.Width), int64(o.Height)
		}
	}
	res, err := proto.Call(ctx, c.Target(""), target.CreateTarget, params)
	if err != nil {
		return nil, output.Wrap("cdp-error", err, "cannot open a tab")
	}
	return &browser.TargetInfo{ID: string(res.TargetID), Type: "page", URL: u, BrowserContextID: o.BrowserContext}, nil
}

// closeTarget closes a tab through the browser (never called for tabs dtb does
// not own).
func (s *Session) closeTarget(ctx context.Context, id string) error {
	b, err := s.Browser(ctx)
	if err != nil {
		return err
	}
	closed := false
	if b.Endpoint != "" {
		closed = browser.HTTPJSON(s.tlsCtx(ctx), http.MethodGet, b.Endpoint, "/json/close/"+id, s.cfg.Headers, nil) == nil
	}
	if !closed {
		c, err := s.BrowserConn(ctx)
		if err != nil {
			return err
		}
		if _, err := proto.Call(ctx, c.Target(""), target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(id)}); err != nil {
			return err
		}
	}
	// Closing is asynchronous: wait (briefly) until the tab is gone, so that the
	// next command's inventory no longer shows it.
	for range 100 {
		pages, err := s.ListPages(ctx)
		if err != nil {
			return nil
		}
		gone := true
		for _, p := range pages {
			if p.ID == id {
				gone = false
			}
		}
		if gone {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
