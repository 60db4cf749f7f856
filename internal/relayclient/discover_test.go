package relayclient

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/relay"
)

// Issues 11.2 and 11.3: discovery finds a dtb relay whose page is slow to answer.
// dtb relay's GET /state asks a held page for a fresh snapshot and waits for it
// (--refresh-ms); a page that took that probe and answers nothing (hung, or
// blocked by a dialog) makes a GET /state wait longer than a discovery round.
// Discovery must not depend on the page: the relay is there.
func TestDiscoveryFindsARelayWhosePageIsSlow(t *testing.T) {
	srv, err := relay.New(relay.Options{Listen: "127.0.0.1:0", LongPollMs: relay.DefaultLongPollMs, RefreshMs: relay.MaxLongPollMs})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-served })
	base := "http://" + addr.String()
	port := addr.(*net.TCPAddr).Port

	// A page checks in (its check-in is held) and then never answers: the
	// probe a state read hands it is never reported on.
	checkIn := func(body string) error {
		resp, err := http.Post(base+Prefix+"/state", "application/json", strings.NewReader(body))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	const snapshot = `"snapshot":{"instanceId":"playground","commands":[]}`
	// (A result, unknown to the relay, so that this first one is not held.)
	if err := checkIn(`{"protocolVersion":2,"reporterId":"hung","allowRun":true,` + snapshot + `,"results":[{"token":"x","outcome":{"ok":true}}]}`); err != nil {
		t.Fatal(err)
	}
	go checkIn(`{"protocolVersion":2,"reporterId":"hung","allowRun":true,"results":[]}`) // held until the relay hands it the probe

	c, err := New("http://localhost:1", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	orig := output.Errorf("relay-unreachable", "nothing at the base")
	found, err := c.discover(context.Background(), []int{port}, orig)
	if err != nil || found == nil || found.Port() != strconv.Itoa(port) {
		t.Fatalf("discovery missed the relay on %d: %v", port, err)
	}
}
