package relayclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// CommonPorts are the loopback ports dev servers usually listen on (Vite dev and
// preview, the upstream playground, Next/CRA/Express, webpack, Angular, Django,
// Jupyter, Astro, Storybook, Parcel …): where dtb looks for a relay when none was
// named and the default does not answer.
var CommonPorts = []int{5173, 5174, 5175, 5273, 4173, 4174, 3000, 3001, 3002, 8080, 8081, 8000, 8888, 4200, 4321, 6006, 5000, 1234, 9000}

// probeTimeout bounds one discovery round: loopback refusals come back at once,
// a relay answers GET /state in milliseconds.
const probeTimeout = time.Second

// Discovery lets a client whose base was not chosen by the user (the default)
// look for a relay on other loopback ports when the base does not answer as one.
type Discovery struct {
	Ports []int
	// Found is told which relay was picked instead of the base (for a warning).
	Found func(from, to string)
}

// SetDiscovery enables discovery (see Discovery) for this client.
func (c *Client) SetDiscovery(d Discovery) { c.discovery = &d }

// discoverable are the failures that mean "no relay at the base".
func discoverable(err error) bool {
	switch output.AsError(err).Reason {
	case "relay-unreachable", "not-a-relay":
		return true
	}
	return false
}

// discover probes every candidate port at once and returns the one relay that
// answers; several are ambiguous-relay, none is orig naming the ports tried.
func (c *Client) discover(ctx context.Context, candidates []int, orig error) (*url.URL, error) {
	var ports []int
	seen := map[int]bool{}
	if p, err := strconv.Atoi(c.base.Port()); err == nil && isLoopbackName(c.base.Hostname()) {
		seen[p] = true // the base itself already failed
	}
	for _, p := range candidates {
		if p > 0 && p < 65536 && !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	if len(ports) == 0 {
		return nil, orig
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	var mu sync.Mutex
	var found []*url.URL
	var wg sync.WaitGroup
	for _, p := range ports {
		wg.Add(1)
		go func(port int) {
			defer wg.Done()
			u := &url.URL{Scheme: "http", Host: "localhost:" + strconv.Itoa(port)}
			if probe(pctx, hc, u) {
				mu.Lock()
				found = append(found, u)
				mu.Unlock()
			}
		}(p)
	}
	wg.Wait()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, output.AsError(ctx.Err())
	}
	sort.Slice(found, func(i, j int) bool { return portOf(found[i]) < portOf(found[j]) })
	tried := make([]int, 0, len(ports)+1)
	if p, err := strconv.Atoi(c.base.Port()); err == nil {
		tried = append(tried, p)
	}
	tried = append(tried, ports...)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		e := output.AsError(orig)
		e.Message += fmt.Sprintf("; no relay answers on the other usual loopback ports either (tried %s)", joinPorts(ports))
		return nil, e.With("triedPorts", tried)
	}
	names := make([]string, len(found))
	for i, u := range found {
		names[i] = u.String()
	}
	return nil, output.Errorf("ambiguous-relay", "no relay at %s, and relays answer on several loopback ports (%s): pick one with --relay or DTB_RELAY", c.base, strings.Join(names, ", ")).With("relays", names).With("triedPorts", tried)
}

// probe is true when GET base/__dev-toolbar/commands answers as the relay does:
// its JSON with a connection object, as the registry (200) or no-page-connected
// (503). Not GET /state: dtb relay answers that only once the page has sent a
// fresh snapshot (--refresh-ms), so a slow or hung page would hide its relay, and
// the snapshot can be megabytes; /commands never asks the page anything.
func probe(ctx context.Context, hc *http.Client, base *url.URL) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+Prefix+"/commands", nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return false
	}
	obj, ok := decodeObject(data, resp.Header.Get("Content-Type"))
	if !ok {
		return false
	}
	conn := strings.TrimSpace(string(obj["connection"]))
	if !strings.HasPrefix(conn, "{") {
		return false
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusServiceUnavailable:
		return strings.TrimSpace(string(obj["reason"])) == `"no-page-connected"`
	}
	return false
}

func isLoopbackName(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

func portOf(u *url.URL) int {
	p, _ := strconv.Atoi(u.Port())
	return p
}

func joinPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}
