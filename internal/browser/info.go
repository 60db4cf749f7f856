package browser

import "time"

// BrowserInfo is the browser a session talks to.
type BrowserInfo struct {
	// Attached is true for a browser dtb did not launch (--cdp, --auto-connect):
	// dtb never stops it and never sends Browser.close to it.
	Attached bool `json:"attached"`
	// Source says how the session found it: "launched", "cdp:<url>" or
	// "auto-connect".
	Source string `json:"source"`
	// Endpoint is the HTTP discovery base (http://host:port) when the browser has
	// one; page websockets are then dialled directly. Empty for browser-only
	// websocket endpoints (wss services, the auto-connect prompt mode).
	Endpoint string `json:"endpoint,omitempty"`
	// WebSocket is the browser websocket URL.
	WebSocket string `json:"webSocket"`
	// PID is the browser process itself, as the browser reports it (a launcher
	// script such as Debian's /usr/bin/chromium-headless-shell starts it
	// without exec); Group is the process group dtb started it in (0 in state
	// files from before: PID led the group then).
	PID         int       `json:"pid,omitempty"`
	Group       int       `json:"group,omitempty"`
	Binary      string    `json:"binary,omitempty"`
	Headless    bool      `json:"headless,omitempty"`
	ProfileDir  string    `json:"profileDir,omitempty"`
	TempProfile bool      `json:"tempProfile,omitempty"`
	Version     string    `json:"version,omitempty"`
	StartedAt   time.Time `json:"startedAt"`
	// Viewport is the viewport (WxH) the windows of a launched browser give
	// its tabs; Frame the width and height its window adds around it.
	Viewport string `json:"viewport,omitempty"`
	Frame    [2]int `json:"frame,omitempty"`
}
