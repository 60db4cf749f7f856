package pagedata

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// TestRecordApply: how the host's record turns Network events into requests:
// a redirect keeps one entry whose Redirects name the hops, secrets are
// redacted, a failure is kept with its text, and the record drops its oldest
// entries beyond tr.limit.
func TestRecordApply(t *testing.T) {
	tr := &tabRecord{byID: map[string]*hostRequest{}, limit: 7}
	apply := func(method string, params map[string]any) {
		raw, _ := json.Marshal(params)
		tr.apply(cdp.Event{Method: method, Params: raw})
	}
	send := func(id, url, method string, redirect map[string]any) {
		e := map[string]any{"requestId": id, "loaderId": "L", "documentURL": url, "timestamp": 1, "wallTime": 1700000000, "type": "Fetch",
			"initiator": map[string]any{"type": "script"},
			"request":   map[string]any{"url": url, "method": method, "headers": map[string]any{"Authorization": "Bearer x", "Accept": "*/*"}}}
		if redirect != nil {
			e["redirectResponse"] = redirect
		}
		apply("Network.requestWillBeSent", e)
	}
	response := func(status int, headers map[string]any, mime string) map[string]any {
		return map[string]any{"url": "http://a/new", "status": status, "statusText": "", "headers": headers, "mimeType": mime}
	}
	send("1", "http://a/old", "POST", nil)
	send("1", "http://a/new", "GET", response(302, map[string]any{}, ""))
	apply("Network.responseReceived", map[string]any{"requestId": "1", "loaderId": "L", "timestamp": 1.2, "type": "Fetch",
		"response": response(200, map[string]any{"Set-Cookie": "s=1", "X-A": "b"}, "text/plain")})
	apply("Network.loadingFinished", map[string]any{"requestId": "1", "timestamp": 1.5, "encodedDataLength": 42})
	send("2", "http://a/fail", "GET", nil)
	apply("Network.loadingFailed", map[string]any{"requestId": "2", "timestamp": 2, "type": "Fetch", "errorText": "net::ERR_CONNECTION_REFUSED"})

	reqs := tr.requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 requests, have %+v", reqs)
	}
	r := reqs[0]
	if r.URL != "http://a/new" || *r.Method != "GET" || *r.Status != 200 || len(r.Redirects) != 1 || r.Redirects[0] != "http://a/old" ||
		*r.TransferSize != 42 || r.DurationMs != 500 || r.MimeType != "text/plain" || r.Type != "fetch" || r.Source != "host" {
		t.Errorf("redirected request: %+v", r)
	}
	if r.RequestHeaders["Authorization"] != "(redacted)" || r.RequestHeaders["Accept"] != "*/*" ||
		r.ResponseHeaders["Set-Cookie"] != "(redacted)" || r.ResponseHeaders["X-A"] != "b" {
		t.Errorf("headers: %v %v", r.RequestHeaders, r.ResponseHeaders)
	}
	if f := reqs[1]; !f.Failed || f.Failure != "net::ERR_CONNECTION_REFUSED" || f.Status != nil {
		t.Errorf("failed request: %+v", f)
	}

	for i := 0; i < tr.limit+5; i++ {
		send("n"+strconv.Itoa(i), "http://a/"+strconv.Itoa(i), "GET", nil)
	}
	reqs = tr.requests()
	if len(reqs) != tr.limit || reqs[0].URL != "http://a/5" || tr.byID["1"] != nil {
		t.Errorf("after %d more: %d kept, first %s", tr.limit+5, len(reqs), reqs[0].URL)
	}
}
