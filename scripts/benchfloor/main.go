// Command benchfloor is the raw floor of scripts/bench: the same CDP calls dtb
// makes for eval, open, screenshot and screenshot --full, with nothing else — the
// websocket transport dtb uses (chromedp's remote.Conn) and nothing more: no
// session file, no flags, no output layer.
//
//	benchfloor eval     WS_PAGE_URL EXPR
//	benchfloor open     HTTP_ENDPOINT URL     (new tab, like dtb open URL)
//	benchfloor navigate WS_PAGE_URL URL       (like dtb open --current URL)
//	benchfloor shot     WS_PAGE_URL OUT.jpg   (viewport, JPEG 70)
//	benchfloor full     WS_PAGE_URL OUT.jpg   (full page, JPEG 70)
//	benchfloor click    WS_PAGE_URL SELECTOR  (locate in one evaluation, then
//	                                           move/press/release sent at once)
//	benchfloor type     WS_PAGE_URL SELECTOR TEXT (focus and select in one
//	                                           evaluation, then Input.insertText)
//	benchfloor inspect  WS_PAGE_URL -         (one evaluation listing the
//	                                           interactive elements' roles and names)
//	benchfloor cold     CHROME URL            (launch CHROME headless with a new
//	                                           profile, navigate its first tab, wait
//	                                           for load; prints the browser's PID and
//	                                           profile for the caller to remove)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp/remote"
)

type conn struct {
	tr *remote.Conn
	id int64
}

func dial(raw string) *conn {
	tr, err := remote.DialContext(context.Background(), raw)
	check(err)
	return &conn{tr: tr}
}

func (c *conn) read() *cdproto.Message {
	m := new(cdproto.Message)
	check(c.tr.Read(context.Background(), m))
	return m
}

// call sends a command and reads until its answer, returning events seen.
func (c *conn) call(method string, params any, out any, seen func(*cdproto.Message)) {
	c.id++
	req := &cdproto.Message{ID: c.id, Method: cdproto.MethodType(method)}
	if params != nil {
		b, err := json.Marshal(params)
		check(err)
		req.Params = b
	}
	check(c.tr.Write(context.Background(), req))
	for {
		m := c.read()
		if m.ID == c.id {
			if m.Error != nil {
				check(fmt.Errorf("%s: %s", method, m.Error))
			}
			if out != nil {
				check(json.Unmarshal(m.Result, out))
			}
			return
		}
		if seen != nil && m.Method != "" {
			seen(m)
		}
	}
}

// send writes a command without reading its answer (pipelining); wait reads
// until the answer of the last command sent.
func (c *conn) send(method string, params any) {
	c.id++
	req := &cdproto.Message{ID: c.id, Method: cdproto.MethodType(method)}
	b, err := json.Marshal(params)
	check(err)
	req.Params = b
	check(c.tr.Write(context.Background(), req))
}

func (c *conn) wait() {
	for {
		m := c.read()
		if m.Error != nil {
			check(fmt.Errorf("%s", m.Error))
		}
		if m.ID == c.id {
			return
		}
	}
}

func (c *conn) eval(expr string) json.RawMessage {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res, nil)
	return res.Result.Value
}

const inspectJS = `(() => { const out = []; for (const e of document.querySelectorAll('a[href],button,input,select,textarea,[role],[tabindex]')) { const r = e.getBoundingClientRect(); if (!r.width && !r.height) continue; out.push((e.getAttribute('role') || e.localName) + ' ' + JSON.stringify((e.labels && e.labels[0] ? e.labels[0].textContent : e.getAttribute('aria-label') || e.textContent || e.placeholder || '').trim().slice(0, 80))); } return out.join('\n'); })()`

func click(ws, sel string) {
	c := dial(ws)
	var pt [2]float64
	check(json.Unmarshal(c.eval(`(() => { const e = document.querySelector(`+mustJSON(sel)+`); e.scrollIntoView({block: 'center', inline: 'center'}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`), &pt))
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p := map[string]any{"type": typ, "x": pt[0], "y": pt[1], "button": "left", "buttons": 0}
		if typ != "mouseMoved" {
			p["clickCount"] = 1
		}
		if typ == "mousePressed" {
			p["buttons"] = 1
		}
		c.send("Input.dispatchMouseEvent", p)
	}
	c.wait()
	fmt.Printf("{\"point\":[%d,%d]}\n", int(pt[0]), int(pt[1]))
}

func typeText(ws, sel, text string) {
	c := dial(ws)
	c.eval(`(() => { const e = document.querySelector(` + mustJSON(sel) + `); e.focus(); e.select(); })()`)
	c.call("Input.insertText", map[string]any{"text": text}, nil, nil)
	fmt.Printf("{\"typed\":%d}\n", len(text))
}

// cold launches chrome, waits for its DevTools port and first tab, and
// navigates that tab to target.
func cold(chrome, target string) {
	profile, err := os.MkdirTemp("", "benchfloor-cold-")
	check(err)
	cmd := exec.Command(chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	check(cmd.Start())
	var port int
	for port == 0 {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			port, _ = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		}
		if port == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var ws string
	for ws == "" {
		var list []struct{ Type, WebSocketDebuggerURL string }
		if resp, err := http.Get(base + "/json/list"); err == nil {
			json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
		}
		for _, t := range list {
			if t.Type == "page" {
				ws = t.WebSocketDebuggerURL
				break
			}
		}
		if ws == "" {
			time.Sleep(2 * time.Millisecond)
		}
	}
	fmt.Fprintf(os.Stderr, "%d %s\n", cmd.Process.Pid, profile)
	navigate(ws, target)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
}

const pageInfo = `(() => { const n = performance.getEntriesByType('navigation')[0]; return {url: location.href, title: document.title, status: n && n.responseStatus || null}; })()`

func navigate(ws, target string) {
	c := dial(ws)
	c.call("Page.enable", nil, nil, nil)
	c.call("Network.enable", map[string]any{"maxTotalBufferSize": 0}, nil, nil)
	loaded := false
	var nav struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	c.call("Page.navigate", map[string]any{"url": target}, &nav, func(m *cdproto.Message) { loaded = loaded || m.Method == "Page.loadEventFired" })
	if nav.ErrorText != "" {
		check(fmt.Errorf("%s", nav.ErrorText))
	}
	for !loaded {
		loaded = c.read().Method == "Page.loadEventFired"
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	c.call("Runtime.evaluate", map[string]any{"expression": pageInfo, "returnByValue": true}, &res, nil)
	os.Stdout.Write(append(res.Result.Value, '\n'))
}

func shot(ws, out string, full bool) {
	c := dial(ws)
	params := map[string]any{"format": "jpeg", "quality": 70}
	if full {
		var lm struct {
			Size struct{ Width, Height float64 } `json:"cssContentSize"`
		}
		c.call("Page.getLayoutMetrics", nil, &lm, nil)
		params["clip"] = map[string]any{"x": 0, "y": 0, "width": math.Ceil(lm.Size.Width), "height": math.Ceil(lm.Size.Height), "scale": 1}
		params["captureBeyondViewport"] = true
	}
	var res struct {
		Data []byte `json:"data"`
	}
	c.call("Page.captureScreenshot", params, &res, nil)
	check(os.WriteFile(out, res.Data, 0o600))
	fmt.Printf("{\"path\":%q,\"bytes\":%d}\n", out, len(res.Data))
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: benchfloor eval|open|navigate|shot|full|click|type|inspect|cold TARGET ARG [TEXT]")
		os.Exit(2)
	}
	mode, target, arg := os.Args[1], os.Args[2], os.Args[3]
	switch mode {
	case "eval":
		c := dial(target)
		var res struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
		}
		c.call("Runtime.evaluate", map[string]any{"expression": arg, "returnByValue": true, "awaitPromise": true}, &res, nil)
		os.Stdout.Write(append(res.Result.Value, '\n'))
	case "open":
		req, _ := http.NewRequest(http.MethodPut, strings.TrimRight(target, "/")+"/json/new?about:blank", nil)
		resp, err := http.DefaultClient.Do(req)
		check(err)
		var t struct {
			WS string `json:"webSocketDebuggerUrl"`
		}
		check(json.NewDecoder(resp.Body).Decode(&t))
		resp.Body.Close()
		navigate(t.WS, arg)
	case "navigate":
		navigate(target, arg)
	case "shot":
		shot(target, arg, false)
	case "full":
		shot(target, arg, true)
	case "click":
		click(target, arg)
	case "type":
		if len(os.Args) < 5 {
			check(fmt.Errorf("type wants TEXT"))
		}
		typeText(target, arg, os.Args[4])
	case "inspect":
		v := dial(target).eval(inspectJS)
		os.Stdout.Write(append(v, '\n'))
	case "cold":
		cold(target, arg)
	default:
		check(fmt.Errorf("unknown mode %q", mode))
	}
}
