package session

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/output"
)

// StatusResult is what `dtb status` prints.
type StatusResult struct {
	Connected   bool              `json:"connected"`
	Session     string            `json:"session"`
	SessionFile string            `json:"sessionFile"`
	Browser     *BrowserStatus    `json:"browser,omitempty"`
	CurrentTab  *TabStatus        `json:"currentTab"`
	Tabs        []TabStatus       `json:"tabs"`
	Windows     []WindowStatus    `json:"windows"`
	Workspaces  []WorkspaceStatus `json:"workspaces"`
	Diagnostics *Diagnostics      `json:"diagnostics,omitempty"`
}

// BrowserStatus describes the session's browser.
type BrowserStatus struct {
	Attached   bool   `json:"attached"`
	Source     string `json:"source"`
	Endpoint   string `json:"endpoint,omitempty"`
	WebSocket  string `json:"webSocket"`
	Version    string `json:"version,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Binary     string `json:"binary,omitempty"`
	Headless   bool   `json:"headless,omitempty"`
	ProfileDir string `json:"profileDir,omitempty"`
}

// TabStatus is one page of the inventory.
type TabStatus struct {
	ID        string     `json:"id"`
	Alias     string     `json:"alias"`
	URL       string     `json:"url"`
	Title     string     `json:"title"`
	Window    int        `json:"window,omitempty"`
	Owned     bool       `json:"owned"`
	Workspace string     `json:"workspace,omitempty"`
	Incognito bool       `json:"incognito,omitempty"`
	Current   bool       `json:"current"`
	Expires   *time.Time `json:"ownedUntil,omitempty"`
}

// WindowStatus groups tabs by browser window.
type WindowStatus struct {
	ID        int      `json:"id"`
	Tabs      []string `json:"tabs"` // aliases
	Workspace string   `json:"workspace,omitempty"`
}

// WorkspaceStatus is one workspace of the session.
type WorkspaceStatus struct {
	Name      string   `json:"name"`
	Window    int      `json:"window,omitempty"`
	Incognito bool     `json:"incognito"`
	ActiveTab string   `json:"activeTab,omitempty"` // alias
	Tabs      []string `json:"tabs"`                // aliases
	Open      bool     `json:"open"`
}

// Diagnostics explain why no browser is reachable.
type Diagnostics struct {
	Reason        string            `json:"reason"`
	Error         string            `json:"error"`
	Tried         []browser.Attempt `json:"tried"`
	BrowserBinary string            `json:"browserBinary,omitempty"`
	BinaryError   string            `json:"browserBinaryError,omitempty"`
	Searched      []string          `json:"searched,omitempty"`
	Hint          string            `json:"hint"`
}

// Status reports the session's browser, the current tab, every page in every
// window and the workspaces. It never launches a browser: with none reachable it
// succeeds with connected=false and diagnostics.
func (s *Session) Status(ctx context.Context) (*StatusResult, error) {
	res := &StatusResult{Session: s.cfg.Session, SessionFile: s.st.path, Tabs: []TabStatus{}, Windows: []WindowStatus{}, Workspaces: []WorkspaceStatus{}}
	var b *browser.BrowserInfo
	var err error
	if s.state.Browser == nil && s.cfg.CDP == "" && !s.cfg.AutoConnect {
		s.tried = append(s.tried, browser.Attempt{Source: "session", Endpoint: s.st.path, Error: "the session has no browser yet"})
		err = output.Errorf("no-browser", "session %q has no browser; a page command or 'dtb browser launch' starts one", s.cfg.Session)
	} else {
		noLaunch := s.cfg.NoLaunch
		s.cfg.NoLaunch = true
		b, err = s.Browser(ctx)
		s.cfg.NoLaunch = noLaunch
	}
	var pages []browser.TargetInfo
	listed := time.Now()
	if err == nil {
		pages, err = s.ListPages(ctx)
	}
	if err != nil {
		res.Diagnostics = s.diagnose(err)
		res.Workspaces = workspaceStatus(s.state, nil)
		return res, nil
	}
	res.Connected = true
	res.Browser = &BrowserStatus{Attached: b.Attached, Source: b.Source, Endpoint: browser.Redact(b.Endpoint), WebSocket: browser.Redact(b.WebSocket), Version: b.Version, PID: b.PID, Binary: b.Binary, Headless: b.Headless, ProfileDir: b.ProfileDir}
	s.prune(ctx, pages, listed)
	s.Update(ctx, func(st *State) error {
		for _, p := range pages {
			st.EnsureAlias(p.ID)
		}
		return nil
	})
	st := s.state
	cur, _, _ := s.pick(TabSelector{NoCreate: true}, pages)
	windows := map[int]*WindowStatus{}
	var order []int
	for _, p := range pages {
		t := TabStatus{ID: p.ID, Alias: st.AliasOf(p.ID), URL: p.URL, Title: p.Title, Current: p.ID == cur}
		t.Window = s.windowOf(ctx, p.ID)
		if o := st.Tabs[p.ID]; o != nil {
			t.Owned, t.Workspace, t.Incognito = true, o.Workspace, o.BrowserContext != ""
			exp := o.LastUse.Add(TabTTL)
			t.Expires = &exp
		}
		res.Tabs = append(res.Tabs, t)
		if t.Window != 0 {
			w := windows[t.Window]
			if w == nil {
				w = &WindowStatus{ID: t.Window, Tabs: []string{}}
				windows[t.Window] = w
				order = append(order, t.Window)
			}
			w.Tabs = append(w.Tabs, t.Alias)
		}
		if t.Current {
			c := t
			res.CurrentTab = &c
		}
	}
	for name, ws := range st.Workspaces {
		if w := windows[ws.Window]; w != nil && ws.Window != 0 {
			w.Workspace = name
		}
	}
	for _, id := range order {
		res.Windows = append(res.Windows, *windows[id])
	}
	res.Workspaces = workspaceStatus(st, pages)
	return res, nil
}

func workspaceStatus(st *State, pages []browser.TargetInfo) []WorkspaceStatus {
	alive := map[string]bool{}
	for _, p := range pages {
		alive[p.ID] = true
	}
	out := []WorkspaceStatus{}
	for _, name := range workspaceNames(st) {
		w := st.Workspaces[name]
		ws := WorkspaceStatus{Name: name, Window: w.Window, Incognito: w.Incognito, ActiveTab: st.AliasOf(w.ActiveTab), Tabs: []string{}}
		var ids []string
		for id, t := range st.Tabs {
			if t.Workspace == name {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			ws.Tabs = append(ws.Tabs, st.AliasOf(id))
			if alive[id] {
				ws.Open = true
			}
		}
		out = append(out, ws)
	}
	return out
}

func (s *Session) diagnose(err error) *Diagnostics {
	d := &Diagnostics{Tried: s.tried, Error: err.Error(), Reason: "no-browser"}
	var oe *output.Error
	if errors.As(err, &oe) {
		d.Reason = oe.Reason
	}
	if d.Tried == nil {
		d.Tried = []browser.Attempt{}
	}
	bin, searched, berr := browser.FindBrowser(s.cfg.Chrome, s.cfg.Headed)
	d.BrowserBinary, d.Searched = bin, searched
	if berr != nil {
		d.BinaryError = berr.Error()
	}
	switch {
	case s.cfg.CDP != "":
		d.Hint = "nothing answers at --cdp " + s.cfg.CDP + "; start Chrome with --remote-debugging-port or fix the address"
	case s.cfg.AutoConnect:
		d.Hint = "enable remote debugging in chrome://inspect/#remote-debugging of a running Chrome"
	case bin != "":
		d.Hint = "no browser runs for this session; any page command (or 'dtb browser launch') starts " + bin
	default:
		d.Hint = "install chromium-headless-shell or chromium, or set DTB_CHROME, or attach with --cdp"
	}
	return d
}
