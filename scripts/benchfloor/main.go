// Command benchfloor is the raw floor of scripts/bench: the same CDP calls dtb
// makes for eval, open, screenshot and screenshot --full, with nothing else — the
// standard library only, a minimal websocket, no session file, no framework.
//
//	benchfloor eval     WS_PAGE_URL EXPR
//	benchfloor open     HTTP_ENDPOINT URL     (new tab, like dtb open URL)
//	benchfloor navigate WS_PAGE_URL URL       (like dtb open --current URL)
//	benchfloor shot     WS_PAGE_URL OUT.jpg   (viewport, JPEG 70)
//	benchfloor full     WS_PAGE_URL OUT.jpg   (full page, JPEG 70)
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

type conn struct {
	nc net.Conn
	br *bufio.Reader
	id int
}

func dial(raw string) *conn {
	u, err := url.Parse(raw)
	check(err)
	nc, err := net.Dial("tcp", u.Host)
	check(err)
	var kb [16]byte
	rand.Read(kb[:])
	fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(kb[:]))
	br := bufio.NewReaderSize(nc, 64<<10)
	resp, err := http.ReadResponse(br, nil)
	check(err)
	if resp.StatusCode != 101 {
		check(fmt.Errorf("handshake: %s", resp.Status))
	}
	return &conn{nc: nc, br: br}
}

func (c *conn) send(method string, params any) int {
	c.id++
	b, _ := json.Marshal(map[string]any{"id": c.id, "method": method, "params": params})
	hdr := []byte{0x81}
	switch n := len(b); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n <= 0xFFFF:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	hdr = append(hdr, 0, 0, 0, 0) // zero mask: payload unchanged
	_, err := c.nc.Write(append(hdr, b...))
	check(err)
	return c.id
}

type msg struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (c *conn) read() msg {
	var data []byte
	for {
		var h [2]byte
		_, err := io.ReadFull(c.br, h[:])
		check(err)
		n := uint64(h[1] & 0x7F)
		if n == 126 {
			var e [2]byte
			io.ReadFull(c.br, e[:])
			n = uint64(binary.BigEndian.Uint16(e[:]))
		} else if n == 127 {
			var e [8]byte
			io.ReadFull(c.br, e[:])
			n = binary.BigEndian.Uint64(e[:])
		}
		p := make([]byte, n)
		_, err = io.ReadFull(c.br, p)
		check(err)
		if h[0]&0x0F >= 8 {
			continue
		}
		data = append(data, p...)
		if h[0]&0x80 != 0 {
			break
		}
	}
	var m msg
	check(json.Unmarshal(data, &m))
	return m
}

// call sends a command and reads until its answer, returning events seen.
func (c *conn) call(method string, params any, out any, seen func(msg)) {
	id := c.send(method, params)
	for {
		m := c.read()
		if m.ID == id {
			if len(m.Error) > 0 {
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
	c.call("Page.navigate", map[string]any{"url": target}, &nav, func(m msg) { loaded = loaded || m.Method == "Page.loadEventFired" })
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
