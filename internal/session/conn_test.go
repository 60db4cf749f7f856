package session

import (
	"errors"
	"github.com/dtb-cli/dtb/internal/cdp"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The transport is chromedp's websocket: a refused upgrade keeps its HTTP status
// (the no-such-tab decision rests on it), headers reach the handshake, and
// closing a page's websocket detaches without closing the tab.
func TestConnOverChromedp(t *testing.T) {
	needBrowser(t)
	ctx := tctx(t)

	_, err := cdp.Dial(ctx, pageWSURL(shared.Endpoint, strings.Repeat("A", 32)), nil)
	var he *cdp.HandshakeError
	if !errors.As(err, &he) || he.Status < 400 {
		t.Fatalf("dialing an unknown target: want a refused handshake with a 4xx/5xx status, got %#v", err)
	}

	id := foreignTab(t)
	c, err := cdp.Dial(ctx, pageWSURL(shared.Endpoint, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := c.Call(ctx, "", "Runtime.evaluate", map[string]any{"expression": "'x'.repeat(3) + '\\ud800'", "returnByValue": true}, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Result.Value, "xxx") {
		t.Fatalf("evaluate answered %q", res.Result.Value)
	}
	var pe *cdp.ProtocolError
	if err := c.Call(ctx, "", "No.such", nil, nil); !errors.As(err, &pe) || pe.Method != "No.such" {
		t.Fatalf("an unknown method: want a ProtocolError naming it, got %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if err := c.Call(ctx, "", "Runtime.evaluate", map[string]any{"expression": "1"}, nil); !errors.Is(err, cdp.ErrConnClosed) {
		t.Fatalf("a call after Close: want ErrConnClosed, got %v", err)
	}
	if !pageExists(t, id) {
		t.Fatal("closing the websocket closed the tab")
	}

	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	_, err = cdp.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/devtools/browser/x", http.Header{"X-Dtb-Test": {"yes"}})
	if !errors.As(err, &he) || he.Status != http.StatusForbidden {
		t.Fatalf("a 403 upgrade: want HandshakeError 403, got %v", err)
	}
	if h := <-got; h.Get("X-Dtb-Test") != "yes" {
		t.Fatalf("the handshake lacked the extra header: %v", h)
	}
}
