// Package relayclient is the HTTP client of the dev toolbar's relay routes
// (spec §4): it maps every status and reason the relay (or a dev server in front of
// it) can answer to a typed *output.Error.
package relayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// DefaultBase is where `dtb relay` listens by default (its --listen
// 127.0.0.1:7357, a port no common dev server uses). A dev server's own relay
// (Vite on 5173, the upstream playground on 5273, …) is found by discovery.
const DefaultBase = "http://localhost:7357"

// Prefix is the relay's route prefix.
const Prefix = "/__dev-toolbar"

// DefaultTimeout is above the relay's own 10 s command deadline so its 504 (which
// says whether the page picked the command up) reaches the user.
const DefaultTimeout = 15 * time.Second

// maxBody bounds what dtb reads from a relay answer.
const maxBody = 64 << 20

// Client talks to one relay.
type Client struct {
	base *url.URL
	http *http.Client
	// deadline ends every request: the timeout New was given is the whole
	// command's, however many requests it makes (issue 19.4).
	deadline  time.Time
	timeout   time.Duration
	discovery *Discovery // nil: the base is the user's choice, no looking elsewhere
}

// New returns a client for the relay at base (scheme://host[:port][/path]); timeout
// (DefaultTimeout when 0) bounds everything it does from now on, not each request.
func New(base string, timeout time.Duration) (*Client, error) {
	if base == "" {
		base = DefaultBase
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, output.Usage("--relay must be an http(s) URL such as http://localhost:5173, got %q", base)
	}
	u.Path = trimRoutes(strings.TrimRight(u.Path, "/"))
	u.RawPath = ""
	// A query or fragment copied along with a route URL is not part of the relay.
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{base: u, http: &http.Client{Timeout: timeout}, deadline: time.Now().Add(timeout), timeout: timeout}, nil
}

// Base is the relay URL the client talks to.
func (c *Client) Base() string { return c.base.String() }

// trimRoutes drops the route prefix (and a route) from a --relay URL copied from
// the upstream docs (http://localhost:5173/__dev-toolbar): it names the same relay.
func trimRoutes(path string) string {
	for _, route := range []string{"/state", "/commands", ""} {
		if p, ok := strings.CutSuffix(path, Prefix+route); ok {
			return strings.TrimRight(p, "/")
		}
	}
	return path
}

func (c *Client) url(route, reporter string) string {
	u := *c.base
	u.Path = c.base.Path + Prefix + route
	// RawPath keeps a command id's escaping (ids may contain "/" or "%").
	u.RawPath = c.base.EscapedPath() + Prefix + escapeRoute(route)
	if reporter != "" {
		u.RawQuery = url.Values{"reporter": {reporter}}.Encode()
	}
	return u.String()
}

func escapeRoute(route string) string {
	if id, ok := strings.CutPrefix(route, "/commands/"); ok {
		return "/commands/" + url.PathEscape(id)
	}
	return route
}

// State fetches GET /__dev-toolbar/state (optionally of one reporter).
func (c *Client) State(ctx context.Context, reporter string) (json.RawMessage, error) {
	return c.do(ctx, http.MethodGet, "/state", reporter, nil, "connection")
}

// Commands fetches GET /__dev-toolbar/commands.
func (c *Client) Commands(ctx context.Context, reporter string) (json.RawMessage, error) {
	return c.do(ctx, http.MethodGet, "/commands", reporter, nil, "commands")
}

// MaxInput is the relay protocol's body cap (4 MiB): a command's input is its body.
const MaxInput = 4 << 20

// Run posts a command; input nil means no body (the command gets no input). An
// input over MaxInput is refused before sending: dtb relay answers it 400, but the
// upstream relay destroys the connection, which reads as a relay that shut down.
func (c *Client) Run(ctx context.Context, id string, input json.RawMessage, reporter string) (json.RawMessage, error) {
	if len(input) > MaxInput {
		return nil, output.Errorf("bad-input", "the input of %q is %d bytes, over the relay protocol's %d-byte body cap; nothing was sent", id, len(input), MaxInput).With("bytes", len(input)).With("maxBytes", MaxInput)
	}
	return c.do(ctx, http.MethodPost, "/commands/"+id, reporter, input, "ok")
}

// do performs one request and returns the body of a 2xx relay answer; mustHave is
// a key that proves the body is the relay's JSON and not something else's. When
// the base is not a relay and discovery is on, it looks for one (until one is
// found) and asks it: nothing reached a page the first time, so asking again is
// safe.
func (c *Client) do(ctx context.Context, method, route, reporter string, body []byte, mustHave string) (json.RawMessage, error) {
	data, err := c.once(ctx, method, route, reporter, body, mustHave)
	if err == nil || c.discovery == nil || !discoverable(err) {
		return data, err
	}
	d := c.discovery
	found, err := c.discover(ctx, d.Ports, err)
	if err != nil {
		// Nothing found yet: a later call (dtb state --until polling while the
		// dev server starts) looks again.
		return nil, err
	}
	c.discovery = nil
	from := c.base.String()
	c.base = found
	if d.Found != nil {
		d.Found(from, found.String())
	}
	return c.once(ctx, method, route, reporter, body, mustHave)
}

func (c *Client) once(ctx context.Context, method, route, reporter string, body []byte, mustHave string) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithDeadline(ctx, c.deadline)
	defer cancel()
	target := c.url(route, reporter)
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, output.Usage("bad relay URL %q: %v", target, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err, method, route, time.Since(start))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, c.transportError(ctx, err, method, route, time.Since(start))
	}
	return c.interpret(resp, data, method, route, reporter, mustHave)
}

func (c *Client) interpret(resp *http.Response, data []byte, method, route, reporter, mustHave string) (json.RawMessage, error) {
	obj, isObj := decodeObject(data, resp.Header.Get("Content-Type"))
	status := resp.StatusCode
	if !isObj {
		return nil, c.foreignAnswer(status, data, resp.Header.Get("Content-Type"), method, route)
	}
	if status >= 200 && status < 300 {
		if _, ok := obj[mustHave]; !ok {
			return nil, output.Errorf("not-a-relay", "%s answered %s %s with JSON that is not the dev-toolbar relay's (no %q key); is the dev-toolbar middleware installed on this server?", c.base, method, Prefix+route, mustHave).With("status", status)
		}
		return json.RawMessage(data), nil
	}
	var reason string
	if json.Unmarshal(obj["reason"], &reason) != nil || reason == "" {
		// Every relay refusal and page outcome carries a reason: JSON without one
		// is some other server's (a 404 {"message":"Not Found"}), not the relay's.
		return nil, c.foreignAnswer(status, data, resp.Header.Get("Content-Type"), method, route)
	}
	return nil, relayError(status, obj, reporter)
}

// relayError turns a relay refusal or a page outcome into an *output.Error that
// keeps the body's details (connection, command, waitedMs, …); reporter is the
// one the request named ("" for none).
func relayError(status int, obj map[string]json.RawMessage, reporter string) *output.Error {
	var reason, msg string
	_ = json.Unmarshal(obj["reason"], &reason)
	if err := json.Unmarshal(obj["error"], &msg); err != nil || msg == "" {
		_ = json.Unmarshal(obj["message"], &msg)
	}
	if reason == "" {
		reason = "relay-error"
	}
	if msg == "" {
		msg = fmt.Sprintf("the relay answered %d %s", status, reason)
	}
	e := output.Errorf(reason, "%s", msg)
	for k, v := range obj {
		switch k {
		case "ok", "reason", "error":
			continue
		case "message":
			if string(v) == mustJSON(msg) {
				continue
			}
		}
		e.With(k, v)
	}
	e.With("status", status)
	explainBusy(e, obj, reporter)
	return e
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// foreignAnswer handles answers that are not the relay's JSON: a dev server without
// the middleware (HTML index with 200, or an empty 404) and Vite's own plain-text
// refusals that answer before any plugin runs (spec §8.1, §8.5).
func (c *Client) foreignAnswer(status int, data []byte, ctype, method, route string) *output.Error {
	text := strings.TrimSpace(string(data))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	switch {
	case status == http.StatusForbidden:
		return output.Errorf("refused", "%s refused %s %s: %s", c.base, method, Prefix+route, orEmpty(text)).With("status", status).With("body", text)
	case status == http.StatusBadRequest:
		return output.Errorf("bad-request", "%s answered %s %s with 400 %s", c.base, method, Prefix+route, orEmpty(text)).With("status", status).With("body", text)
	case (status >= 200 && status < 300) || status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return output.Errorf("not-a-relay", "%s answered %s %s with %d %s instead of the relay's JSON: the dev-toolbar middleware is not installed on this server (or --relay points at the wrong port)", c.base, method, Prefix+route, status, describeType(ctype)).With("status", status)
	}
	return output.Errorf("relay-error", "%s answered %s %s with %d %s: %s", c.base, method, Prefix+route, status, describeType(ctype), orEmpty(text)).With("status", status)
}

func orEmpty(s string) string {
	if s == "" {
		return "(empty body)"
	}
	return s
}

func describeType(ctype string) string {
	if ctype == "" {
		return "and no content type"
	}
	return ctype
}

func decodeObject(data []byte, ctype string) (map[string]json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, false
	}
	return obj, true
}

// transportError classifies a failed round trip.
func (c *Client) transportError(ctx context.Context, err error, method, route string, waited time.Duration) *output.Error {
	where := fmt.Sprintf("%s %s%s", method, c.base, Prefix+route)
	var ne net.Error
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return output.Wrap("interrupted", err, "interrupted during "+where)
	case ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return output.Errorf("timeout", "no answer from the relay to %s within %s (--timeout %s is the whole command's)", where, waited.Round(time.Millisecond), c.timeout).With("waitedMs", waited.Milliseconds())
	case errors.Is(err, syscall.ECONNREFUSED), isDNS(err):
		return output.Errorf("relay-unreachable", "cannot reach the relay at %s: %v; is the dev server (or `dtb relay`) running? Set --relay or DTB_RELAY", c.base, rootCause(err)).With("relay", c.base.String())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		// A dev server that shuts down destroys held requests instead of answering
		// 503 server-closing (spec §8.2): the server went away.
		return output.Errorf("server-closing", "the relay at %s closed the connection before answering %s (it probably shut down)", c.base, where).With("waitedMs", waited.Milliseconds())
	}
	return output.Wrap("relay-unreachable", err, "cannot reach the relay at "+c.base.String())
}

func isDNS(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr)
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}
