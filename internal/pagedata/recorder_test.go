package pagedata

import (
	"strconv"
	"testing"
)

// TestRecordApply: how the host's record turns Network events into requests:
// a redirect keeps one entry whose Redirects name the hops, secrets are
// redacted, a failure is kept with its text, and the record drops its oldest
// entries beyond RecordLimit.
func TestRecordApply(t *testing.T) {
	tr := &tabRecord{byID: map[string]*hostRequest{}}
	send := func(id, url, method string, redirect *liveResponse) {
		e := &recEvent{RequestID: id, Timestamp: 1, WallTime: 1700000000, Type: "Fetch", RedirectResponse: redirect}
		e.Request.URL, e.Request.Method = url, method
		e.Request.Headers = map[string]string{"Authorization": "Bearer x", "Accept": "*/*"}
		tr.apply("Network.requestWillBeSent", e)
	}
	send("1", "http://a/old", "POST", nil)
	send("1", "http://a/new", "GET", &liveResponse{Status: 302})
	resp := &recEvent{RequestID: "1", Type: "Fetch"}
	resp.Response = &struct {
		liveResponse
		Headers  map[string]string `json:"headers"`
		MimeType string            `json:"mimeType"`
	}{liveResponse{Status: 200}, map[string]string{"Set-Cookie": "s=1", "X-A": "b"}, "text/plain"}
	tr.apply("Network.responseReceived", resp)
	tr.apply("Network.loadingFinished", &recEvent{RequestID: "1", Timestamp: 1.5, EncodedDataLength: 42})
	send("2", "http://a/fail", "GET", nil)
	tr.apply("Network.loadingFailed", &recEvent{RequestID: "2", Timestamp: 2, ErrorText: "net::ERR_CONNECTION_REFUSED"})

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

	for i := 0; i < RecordLimit+5; i++ {
		send("n"+strconv.Itoa(i), "http://a/"+strconv.Itoa(i), "GET", nil)
	}
	reqs = tr.requests()
	if len(reqs) != RecordLimit || reqs[0].URL != "http://a/5" || tr.byID["1"] != nil {
		t.Errorf("after %d more: %d kept, first %s", RecordLimit+5, len(reqs), reqs[0].URL)
	}
}
