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
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"

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
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: benchfloor eval|open|navigate|shot|full TARGET ARG")
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
	default:
		check(fmt.Errorf("unknown mode %q", mode))
	}
}
