package session

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/output"
)

// DefaultViewport is the viewport of the tabs dtb opens: the workspace size.
const DefaultViewport = "1280x900"

// Viewport is a tab's layout viewport in CSS pixels.
type Viewport struct{ W, H int }

func (v Viewport) String() string { return fmt.Sprintf("%dx%d", v.W, v.H) }

// ParseViewport validates --viewport WxH ("" is the default).
func ParseViewport(s string) (Viewport, error) {
	if s == "" {
		s = DefaultViewport
	}
	w, h, ok := browser.ParseSize(s)
	if !ok || w > 10000 || h > 10000 {
		return Viewport{}, output.Usage("--viewport wants WxH in CSS pixels (e.g. 1280x900), got %q", s)
	}
	return Viewport{w, h}, nil
}

// viewport is the viewport the configuration asks for.
func (s *Session) viewport() Viewport {
	v, err := ParseViewport(s.cfg.Viewport)
	if err != nil {
		v, _ = ParseViewport("")
	}
	return v
}

// sizeTabs reports whether the tabs dtb opens need a size of their own: the
// browser's windows do not give the viewport asked for. A launched browser's
// windows give its launch viewport; an attached browser, or one launched
// with --window-size (no viewport recorded), is sized only when --viewport is
// explicit (its windows are what the user made them).
func (s *Session) sizeTabs(b *browser.BrowserInfo) bool {
	if b.Attached || b.Viewport == "" {
		return s.cfg.Viewport != ""
	}
	return b.Viewport != s.viewport().String()
}

// windowFor is the window size that gives viewport v in browser b: v plus
// the window's own frame, measured at launch (0 for the headless shell).
func windowFor(b *browser.BrowserInfo, v Viewport) (int, int) {
	return v.W + b.Frame[0], v.H + b.Frame[1]
}

// fitLaunched makes a just-launched browser's window give viewport v:
// Chrome's window includes its frame (the toolbar of a headed or new-headless
// browser), so the first tab is measured and the window grown by the frame
// once. The frame and the viewport are recorded for later tabs. It reports
// whether it replaced the launch tab.
func (s *Session) fitLaunched(ctx context.Context, info *browser.BrowserInfo, tab string, v Viewport) (replaced bool) {
	p, err := s.attach(ctx, info, tab)
	if err != nil {
		return false
	}
	defer p.Close()
	raw, err := p.Evaluate(ctx, "[innerWidth, innerHeight]", false)
	if err != nil {
		return false
	}
	var in [2]int
	if json.Unmarshal(raw, &in) != nil {
		return false
	}
	if in[0] == v.W && in[1] == v.H {
		info.Viewport = v.String()
		return false
	}
	// The Browser domain is the browser websocket's (the session's browser
	// is not recorded yet: no BrowserConn).
	c, err := s.dial(ctx, info.WebSocket)
	if err != nil {
		return false
	}
	defer c.Close()
	win, err := proto.Call(ctx, c.Target(""), cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: target.ID(tab)})
	if err != nil || win.WindowID == 0 {
		return false
	}
	var bounds cdpbrowser.Bounds
	if win.Bounds != nil {
		bounds = *win.Bounds
	}
	frame := [2]int{int(bounds.Width) - in[0], int(bounds.Height) - in[1]}
	if frame[0] < 0 || frame[1] < 0 {
		return false
	}
	if _, err := proto.Call(ctx, c.Target(""), cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: win.WindowID, Bounds: &cdpbrowser.Bounds{Width: int64(v.W + frame[0]), Height: int64(v.H + frame[1]), WindowState: cdpbrowser.WindowStateNormal}}); err != nil {
		return false
	}
	info.Frame, info.Viewport = frame, v.String()
	// Chrome's launch tab keeps a shorter viewport after the resize (new
	// tabs of the window get the right one): it is replaced by a new tab.
	raw, err = p.Evaluate(ctx, "[innerWidth, innerHeight]", false)
	if err == nil && json.Unmarshal(raw, &in) == nil && (in[0] != v.W || in[1] != v.H) && info.Endpoint != "" {
		var t browser.TargetInfo
		if browser.HTTPJSON(ctx, http.MethodPut, info.Endpoint, "/json/new?about:blank", s.cfg.Headers, &t) == nil && t.ID != "" {
			browser.HTTPJSON(ctx, http.MethodGet, info.Endpoint, "/json/close/"+tab, s.cfg.Headers, nil)
			return true
		}
	}
	return false
}
