package pagedata

import (
	"strings"
	"testing"
	"time"
)

// fetchRecord is the fixture's own account of a request it made.
type fetchRecord struct {
	Method, URL, Error string
	Status             int
}

func findReq(reqs []Request, url, typ string) *Request {
	for i := range reqs {
		if reqs[i].URL == url && (typ == "" || reqs[i].Type == typ) {
			return &reqs[i]
		}
	}
	return nil
}

// TestNetwork: the requests made before dtb attached come back on a new
// connection with the statuses the page saw, network errors named; --failed,
// --filter and the gate; --wait and --reload record live with methods.
func TestNetwork(t *testing.T) {
	s := testSession(t)
	first := openTab(t, s, fixture("network.html"))
	var record []fetchRecord
	evalJSON(t, first, "window.loaded.then(() => window.record)", &record)
	first.Close()
	if len(record) != 4 {
		t.Fatalf("fixture record: %+v", record)
	}
	ctx := tctx(t)
	p := connect(t, s, first.ID)
	res, err := ReadNetwork(ctx, p, NetworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range record {
		r := findReq(res.Requests, want.URL, "fetch")
		if r == nil {
			t.Errorf("%s %s not listed: %+v", want.Method, want.URL, res.Requests)
			continue
		}
		if want.Error != "" {
			if !r.Failed || r.Status != nil || r.Failure != "net::ERR_CONNECTION_REFUSED" {
				t.Errorf("%s: the page saw %s; dtb says %+v", want.URL, want.Error, r)
			}
			continue
		}
		if r.Status == nil || *r.Status != want.Status || r.Failed != (want.Status >= 400) {
			t.Errorf("%s: the page saw %d; dtb says %+v", want.URL, want.Status, r)
		}
	}
	if r := findReq(res.Requests, fixture("__status__/404"), "image"); r == nil || !r.Failed || *r.Status != 404 || *r.Method != "GET" || !strings.Contains(r.Failure, "Not Found") {
		t.Errorf("the image's 404: %+v", r)
	}
	if r := findReq(res.Requests, fixture("network.html"), "document"); r == nil || *r.Status != 200 || r.Failed || *r.Size == 0 {
		t.Errorf("the document: %+v", r)
	}
	if r := findReq(res.Requests, fixture("style.css"), "link"); r == nil || *r.Status != 200 || *r.Size != 21 {
		t.Errorf("the stylesheet: %+v", r)
	}
	if res.Failed != 4 {
		t.Errorf("%d failed, want 4 (404 image, 404, 500, refused fetch): %+v", res.Failed, res.Requests)
	}
	if err := res.FailOnFailed(); reasonOf(err) != "network-failures" {
		t.Errorf("gate: %v", err)
	}
	failed, err := ReadNetwork(ctx, connect(t, s, p.ID), NetworkOptions{Failed: true, Filter: "/__status__/5"})
	if err != nil || failed.Count != 1 || *failed.Requests[0].Status != 500 {
		t.Errorf("--failed --filter: %v %+v", err, failed)
	}
	ok, _ := ReadNetwork(ctx, connect(t, s, p.ID), NetworkOptions{Filter: "style.css"})
	if ok.Count != 1 || ok.FailOnFailed() != nil {
		t.Errorf("a filter with no failure: %+v", ok)
	}

	// Live: requests made while dtb watches, with their methods.
	live := connect(t, s, p.ID)
	go func() {
		time.Sleep(300 * time.Millisecond)
		live.Evaluate(ctx, "more('w')", true)
	}()
	res, err = ReadNetwork(ctx, connect(t, s, p.ID), NetworkOptions{Wait: 2 * time.Second, Filter: "more=w"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 2 || *res.Requests[0].Method != "GET" || *res.Requests[0].Status != 200 || *res.Requests[1].Method != "DELETE" || *res.Requests[1].Status != 503 || !res.Requests[1].Failed || res.Requests[1].Source != "live" {
		t.Errorf("--wait: %+v", res.Requests)
	}

	// --reload: the page's requests again, recorded live from the start.
	res, err = ReadNetwork(ctx, connect(t, s, p.ID), NetworkOptions{Reload: true, Wait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r := findReq(res.Requests, fixture("__status__/500"), ""); r == nil || *r.Method != "POST" || *r.Status != 500 {
		t.Errorf("--reload POST: %+v", res.Requests)
	}
	if r := findReq(res.Requests, closedURLFor(record), ""); r == nil || !r.Failed || r.Failure != "net::ERR_CONNECTION_REFUSED" {
		t.Errorf("--reload refused: %+v", r)
	}
	if r := findReq(res.Requests, fixture("network.html"), "document"); r == nil || *r.Status != 200 {
		t.Errorf("--reload document: %+v", res.Requests)
	}
}

func closedURLFor(record []fetchRecord) string {
	for _, r := range record {
		if r.Error != "" {
			return r.URL
		}
	}
	return ""
}

// TestNetworkHiddenCrossOrigin: a cross-origin image's 404 is in neither
// resource timing (no Timing-Allow-Origin) nor the browser's log, so dtb
// cannot call it failed from the records; it must say the outcome is hidden
// rather than pass it as a success, and --reload records the real status.
func TestNetworkHiddenCrossOrigin(t *testing.T) {
	s := testSession(t)
	first := openTab(t, s, fixture("network-crossorigin.html"))
	var record map[string]string
	evalJSON(t, first, "window.loaded.then(() => window.record)", &record)
	first.Close()
	missing := strings.Replace(fixture("__status__/404?xo"), "127.0.0.1", "localhost", 1)
	if record[missing] != "error" {
		t.Fatalf("fixture record: %v", record)
	}
	ctx := tctx(t)
	p := connect(t, s, first.ID)
	res, err := ReadNetwork(ctx, p, NetworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := findReq(res.Requests, missing, "")
	if r == nil {
		t.Fatalf("%s not listed: %+v", missing, res.Requests)
	}
	if !r.Failed && (!r.Hidden || res.Hidden < 1) {
		t.Errorf("the page's image failed; dtb lists it as neither failed nor hidden: %+v (result hidden %d)", r, res.Hidden)
	}
	live, err := ReadNetwork(ctx, p, NetworkOptions{Reload: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := findReq(live.Requests, missing, ""); r == nil || !r.Failed || r.Status == nil || *r.Status != 404 || r.Hidden {
		t.Errorf("recorded live, the cross-origin 404: %+v", r)
	}
}
