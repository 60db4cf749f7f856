package session

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/windowopen.js
var windowOpenJS string

// OpenOptions configure Session.OpenURL.
type OpenOptions struct {
	URL       string
	Current   bool   // navigate the current tab (it must be dtb's)
	Tab       string // navigate this tab (it must be dtb's)
	Workspace string // open a tab in this workspace's window (created on first use)
	Incognito *bool  // nil: whatever the workspace window is
	Wait      cdp.WaitMode
	// Prepare, when set, runs on the tab just before it navigates (e.g. to add a
	// new-document script that must see the page's first node).
	Prepare func(ctx context.Context, p *cdp.Page) error
	// Keep leaves the tab's connection open in OpenResult.Page (the caller
	// closes it): what Prepare started on it (a dialog watch) goes on.
	Keep bool
}

// OpenResult is what `dtb open` prints.
type OpenResult struct {
	Tab        cdp.TabRef `json:"tab"`
	URL        string     `json:"url"`
	Title      string     `json:"title"`
	Status     *int       `json:"status"`
	NewTab     bool       `json:"newTab"`
	Workspace  string     `json:"workspace,omitempty"`
	Window     int        `json:"window,omitempty"`
	Incognito  bool       `json:"incognito"`
	TookOver   bool       `json:"tookOverWorkspace,omitempty"`
	MimeType   string     `json:"mimeType,omitempty"`
	Timing     cdp.Timing `json:"timing"`
	Navigation string     `json:"navigation,omitempty"`
	// Dialog is a dialog the page opened while it loaded.
	Dialog *cdp.Dialog `json:"dialog,omitempty"`
	// Page is the tab's connection with OpenOptions.Keep.
	Page *cdp.Page `json:"-"`
}

// OpenURL opens a URL: in a new tab (the default), the current tab, an explicit
// tab, or a workspace's window. Only tabs dtb created are ever navigated.
func (s *Session) OpenURL(ctx context.Context, o OpenOptions) (*OpenResult, error) {
	start := time.Now()
	target := cdp.NormalizeURL(o.URL)
	if target == "" {
		return nil, output.Usage("open wants a URL")
	}
	res := &OpenResult{Workspace: o.Workspace}
	var page *cdp.Page
	switch {
	case o.Current || o.Tab != "":
		if o.Incognito != nil {
			return nil, output.Usage("--incognito opens a new window or tab; it does not combine with --current or --tab")
		}
		p, err := s.Page(ctx, TabSelector{Tab: o.Tab, Workspace: o.Workspace})
		if err != nil {
			return nil, err
		}
		if !p.Owned {
			p.Close()
			return nil, cdp.NotOwned(p)
		}
		page = p
		if t := s.state.Tabs[p.ID]; t != nil {
			res.Workspace = t.Workspace
			res.Incognito = t.BrowserContext != ""
		}
	case o.Workspace != "":
		p, took, err := s.workspaceTab(ctx, o.Workspace, o.Incognito)
		if err != nil {
			return nil, err
		}
		page, res.NewTab, res.TookOver = p, true, took
	default:
		p, err := s.plainNewTab(ctx, o.Incognito != nil && *o.Incognito)
		if err != nil {
			return nil, err
		}
		page, res.NewTab = p, true
		res.Incognito = o.Incognito != nil && *o.Incognito
	}
	defer func() {
		if res.Page == nil {
			page.Close()
		}
	}()
	if w := s.state.Workspaces[res.Workspace]; w != nil && res.Workspace != "" {
		res.Window, res.Incognito = w.Window, w.Incognito
	}
	if o.Prepare != nil {
		if err := o.Prepare(ctx, page); err != nil {
			return nil, err
		}
	}
	nav, err := page.Navigate(ctx, target, o.Wait)
	if err != nil {
		if e, ok := err.(*output.Error); ok {
			e.With("tab", page.ID).With("alias", page.Alias)
		}
		return nil, err
	}
	res.Tab = cdp.TabRef{ID: page.ID, Alias: page.Alias}
	res.URL, res.Title, res.Status, res.MimeType = nav.URL, nav.Title, nav.Status, nav.MimeType
	res.Timing = nav.Timing
	res.Timing.TotalMs = time.Since(start).Milliseconds()
	if !res.NewTab {
		// Make the navigated tab current (and renew it) without a second write
		// when nothing changes.
		s.touch(ctx, page.ID, true)
	}
	if o.Keep {
		res.Page = page
	}
	return res, nil
}

// SetDialog reports a dialog the page opened while it loaded.
func (r *OpenResult) SetDialog(d *cdp.Dialog) { r.Dialog = d }

// plainNewTab creates an owned tab (in a fresh incognito context when asked),
// makes it current and connects to it.
func (s *Session) plainNewTab(ctx context.Context, incognito bool) (*cdp.Page, error) {
	var t *browser.TargetInfo
	b := s.fastBrowser()
	if b != nil && newTabByHTTP(b) && !incognito && !s.sizeTabs(b) {
		// Hot path: the remembered browser's discovery endpoint, no check first;
		// any failure falls back to the checked path below.
		var ti browser.TargetInfo
		if err := browser.HTTPJSON(s.tlsCtx(ctx), http.MethodPut, b.Endpoint, "/json/new?about:blank", s.cfg.Headers, &ti); err == nil && ti.ID != "" {
			t = &ti
		}
	}
	var bctx string
	if t == nil {
		var err error
		if b, err = s.Browser(ctx); err != nil {
			return nil, err
		}
		if incognito {
			if bctx, err = s.newContext(ctx); err != nil {
				return nil, err
			}
		}
		if id := s.launchTab; id != "" && !incognito {
			// The browser was launched just now for this command: its own
			// blank first tab is dtb's and unused, so it is the new tab (a
			// cold open leaves one tab, not two).
			s.launchTab = ""
			t = &browser.TargetInfo{ID: id, Type: "page", URL: "about:blank"}
		} else if t, err = s.NewTab(ctx, NewTabOptions{BrowserContext: bctx}); err != nil {
			return nil, err
		}
	}
	if err := s.Update(ctx, func(st *State) error {
		st.Own(t.ID, "", bctx, time.Now().UTC())
		st.CurrentTab = t.ID
		return nil
	}); err != nil {
		return nil, err
	}
	return s.attach(ctx, b, t.ID)
}

func (s *Session) newContext(ctx context.Context) (string, error) {
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return "", err
	}
	res, err := proto.Call(ctx, c.Target(""), target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: new(false)})
	if err != nil {
		return "", output.Wrap("cdp-error", err, "cannot create an incognito browser context")
	}
	id := string(res.BrowserContextID)
	err = s.Update(ctx, func(st *State) error {
		st.Contexts = append(st.Contexts, id)
		return nil
	})
	return id, err
}

// windowOf is the browser window id of a tab (0 when the browser cannot say,
// e.g. a headless shell).
func (s *Session) windowOf(ctx context.Context, id string) int {
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return 0
	}
	res, err := proto.Call(ctx, c.Target(""), cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: target.ID(id)})
	if err != nil {
		return 0
	}
	return int(res.WindowID)
}

// workspaceTab returns a new owned tab in the workspace's window: the window is
// created (unfocused, sized for the viewport, 1280×900 by default, incognito on request) on first use, or when an
// explicit incognito value does not match the existing window, in which case
// the new window takes over the workspace.
func (s *Session) workspaceTab(ctx context.Context, name string, incognito *bool) (*cdp.Page, bool, error) {
	b, err := s.Browser(ctx)
	if err != nil {
		return nil, false, err
	}
	pages, err := s.ListPages(ctx)
	if err != nil {
		return nil, false, err
	}
	alive := map[string]bool{}
	for _, p := range pages {
		alive[p.ID] = true
	}
	st := s.state
	w := st.Workspaces[name]
	var anchor string
	if w != nil {
		if alive[w.ActiveTab] {
			anchor = w.ActiveTab
		} else {
			for id, t := range st.Tabs {
				if t.Workspace == name && alive[id] {
					anchor = id
					break
				}
			}
		}
	}
	tookOver := false
	if w != nil && anchor != "" && incognito != nil && *incognito != w.Incognito {
		anchor, tookOver = "", true
	}
	if anchor != "" {
		id, err := s.openInWindow(ctx, b, anchor, alive)
		if err == nil {
			if err := s.Update(ctx, func(st *State) error {
				st.Own(id, name, w.BrowserContext, time.Now().UTC())
				if ws := st.Workspaces[name]; ws != nil {
					ws.ActiveTab = id
				}
				st.CurrentTab = id
				return nil
			}); err != nil {
				return nil, false, err
			}
			p, err := s.attach(ctx, b, id)
			return p, false, err
		}
		// The anchor tab could not open one: fall back to a new window.
		tookOver = w != nil
	}
	inc := incognito != nil && *incognito
	var bctx string
	if inc {
		if bctx, err = s.newContext(ctx); err != nil {
			return nil, false, err
		}
	}
	t, err := s.NewTab(ctx, NewTabOptions{NewWindow: true, BrowserContext: bctx})
	if err != nil {
		return nil, false, err
	}
	win := s.windowOf(ctx, t.ID)
	if err := s.Update(ctx, func(st *State) error {
		if old := st.Workspaces[name]; old != nil {
			for _, tab := range st.Tabs {
				if tab.Workspace == name {
					tab.Workspace = "" // the old window's tabs stay dtb's but leave the workspace
				}
			}
		}
		if st.Workspaces == nil {
			st.Workspaces = map[string]*Workspace{}
		}
		now := time.Now().UTC()
		st.Workspaces[name] = &Workspace{Window: win, ActiveTab: t.ID, Incognito: inc, BrowserContext: bctx, Created: now}
		st.Own(t.ID, name, bctx, now)
		st.CurrentTab = t.ID
		return nil
	}); err != nil {
		return nil, false, err
	}
	p, err := s.attach(ctx, b, t.ID)
	return p, tookOver, err
}

// openInWindow opens a blank tab in the anchor tab's window (window.open as a
// user gesture: CDP's Target.createTarget cannot name a window) and returns its
// target id.
func (s *Session) openInWindow(ctx context.Context, b *browser.BrowserInfo, anchor string, known map[string]bool) (string, error) {
	c, err := s.BrowserConn(ctx)
	if err != nil {
		return "", err
	}
	created, stop := c.Subscribe("", target.TargetCreated.Method)
	defer stop()
	if _, err := proto.Call(ctx, c.Target(""), target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		return "", err
	}
	ap, err := s.attach(ctx, b, anchor)
	if err != nil {
		return "", err
	}
	defer ap.Close()
	marker := fmt.Sprintf("dtb-%d", time.Now().UnixNano())
	if _, err := proto.Call(ctx, ap, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    "(" + strings.TrimSpace(windowOpenJS) + ")(" + mustJSON(marker) + ")",
		UserGesture:   new(true),
		ReturnByValue: new(true),
	}); err != nil {
		return "", err
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		select {
		case ev, ok := <-created:
			if !ok {
				return "", cdp.ErrConnClosed
			}
			e, ok := cdp.Decode(target.TargetCreated, ev)
			if !ok || e.TargetInfo == nil || e.TargetInfo.Type != "page" {
				continue
			}
			t := e.TargetInfo
			if known[string(t.TargetID)] {
				continue
			}
			if string(t.OpenerID) == anchor || strings.HasSuffix(t.URL, "#"+marker) {
				return string(t.TargetID), nil
			}
		case <-tctx.Done():
			return "", fmt.Errorf("the workspace window did not open a tab")
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
