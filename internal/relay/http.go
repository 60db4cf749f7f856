package relay

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody is the upstream's cap on a request body (4 MiB).
const maxBody = 4 << 20

// After refusing an over-cap body the relay keeps reading (and discarding) what the
// client is still sending, up to these bounds, so the client reads the JSON 400
// instead of a TCP reset from a socket closed with unread data.
const (
	drainMax    = 64 << 20
	drainWindow = 5 * time.Second
)

// loopbackNames is the Host guard's set (§4.2/§4.3).
var loopbackNames = map[string]bool{
	"localhost": true, "127.0.0.1": true, "::1": true, "[::1]": true, "0:0:0:0:0:0:0:1": true,
}

// hostAllowed is §4.3 step 2, on the raw Host header, plus the loopback address
// the relay itself listens on: bound to 127.0.0.2, the page's Host is 127.0.0.2,
// and an IP literal cannot be rebound, so accepting it keeps the guard's point.
func (s *Server) hostAllowed(raw string) bool {
	h := strings.TrimSpace(raw)
	if strings.HasPrefix(h, "[") {
		h = h[:strings.Index(h, "]")+1] // no "]" leaves "", which is refused
	} else if i := strings.Index(h, ":"); i >= 0 {
		h = h[:i]
	}
	h = strings.ToLower(h)
	if bound, _ := s.boundHost.Load().(string); bound != "" && h == bound {
		return true
	}
	return loopbackNames[h]
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	raw := r.RequestURI
	if raw == "" {
		raw = r.URL.RequestURI()
	}
	if v := r.Header.Get(rawTargetHeader); v != "" {
		r.Header.Del(rawTargetHeader) // never forwarded upstream
		if orig, ok := strings.CutPrefix(v, s.secret+" "); ok {
			raw = orig
		}
	}
	pathname, _, _ := strings.Cut(raw, "?")
	ours := pathname == s.base || strings.HasPrefix(pathname, s.base+"/")

	// The Host guard also covers the proxied and static paths, so the relay cannot be
	// used to reach the dev server behind it by DNS rebinding.
	if !s.hostAllowed(r.Host) {
		s.send(w, http.StatusForbidden, object{
			{"ok", false},
			{"reason", "non-loopback-host"},
			{"message", "Refused: Host " + quote(r.Host) + " is not a loopback name. " + s.base +
				" is reachable over localhost only — this is the DNS-rebinding guard, not a convenience."},
		})
		return
	}
	if r.Context().Value(reserveKey{}) != nil {
		// Room kept for the relay's routes past the ceiling: one request, then close.
		w.Header().Set("Connection", "close")
	}
	if !ours {
		s.limitBody(w, r)
		if r.Header.Get("Upgrade") == "" {
			dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: s.writeTimeout}
			defer dw.clear()
			w = dw
		}
		s.fallback.ServeHTTP(w, r)
		return
	}
	// Node joins repeated Origin headers with ", ", which can never match.
	if origin := strings.Join(r.Header.Values("Origin"), ", "); origin != "" &&
		origin != "http://"+r.Host && origin != "https://"+r.Host {
		s.send(w, http.StatusForbidden, object{
			{"ok", false},
			{"reason", "cross-origin"},
			{"message", "Refused: Origin " + quote(origin) + " is not this dev server. " + s.base + " is a local debugging surface."},
		})
		return
	}
	s.limitBody(w, r)
	tw := &trackingWriter{ResponseWriter: w}
	start := time.Now()
	defer func() {
		v := recover()
		if v == nil {
			// Successful check-ins arrive every poll; logging them would drown the rest.
			if !(r.Method == http.MethodPost && pathname == s.base+"/state" && tw.status == http.StatusOK) {
				s.logf("relay: %s %s %d (%d ms)", r.Method, raw, tw.status, time.Since(start).Milliseconds())
			}
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		s.logf("relay: %s %s panicked: %v\n%s", r.Method, pathname, v, debug.Stack())
		if !tw.wrote {
			s.send(w, http.StatusInternalServerError, object{
				{"ok", false},
				{"reason", "middleware-error"},
				{"message", fmt.Sprintf("The dev-toolbar middleware threw while handling this request: %v", v)},
			})
		}
	}()
	s.route(tw, r, pathname)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, pathname string) {
	if s.hook != nil {
		s.hook(r.Method + " " + pathname)
	}
	reporter := r.URL.Query().Get("reporter")
	commandsPrefix := s.base + "/commands/"
	switch {
	case r.Method == http.MethodGet && pathname == s.base+"/state":
		s.refresh(r.Context(), reporter)
		s.getState(w, reporter)
	case r.Method == http.MethodGet && pathname == s.base+"/commands":
		s.getCommands(w, reporter)
	case r.Method == http.MethodPost && pathname == s.base+"/state":
		s.postState(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(pathname, commandsPrefix):
		s.postCommand(w, r, pathname[len(commandsPrefix):], reporter)
	default:
		s.send(w, http.StatusNotFound, object{
			{"ok", false},
			{"reason", "unknown-route"},
			{"message", "No such route: " + r.Method + " " + pathname},
			{"routes", []any{
				"GET " + s.base + "/state",
				"GET " + s.base + "/commands",
				"POST " + s.base + "/commands/:id",
				"POST " + s.base + "/state (the page checks in here)",
			}},
		})
	}
}

func (s *Server) getState(w http.ResponseWriter, reporter string) {
	sn, conn, refusal := s.snapshotFor(reporter)
	if refusal != nil {
		s.send(w, http.StatusServiceUnavailable, refusal)
		return
	}
	body := sn.body.clone()
	body.set("connection", conn)
	body.set("extensions", sn.extensions)
	s.send(w, http.StatusOK, body)
}

func (s *Server) getCommands(w http.ResponseWriter, reporter string) {
	sn, conn, refusal := s.snapshotFor(reporter)
	if refusal != nil {
		s.send(w, http.StatusServiceUnavailable, refusal)
		return
	}
	instanceID, _ := sn.body.get("instanceId")
	commands, _ := sn.body.get("commands")
	if commands == nil {
		commands = []any{}
	}
	allowRun, _ := conn.get("allowRun")
	s.send(w, http.StatusOK, object{
		{"instanceId", instanceID},
		{"allowRun", allowRun},
		{"connection", conn},
		{"commands", commands},
	})
}

func badBody(msg string) object {
	return object{{"ok", false}, {"reason", "bad-body"}, {"message", msg}}
}

func (s *Server) postState(w http.ResponseWriter, r *http.Request) {
	v, ok := s.readCheckIn(w, r)
	if !ok {
		return
	}
	body, ok := v.(object)
	if !ok {
		s.send(w, http.StatusBadRequest, badBody("A check-in body must be a JSON object."))
		return
	}
	if results, present := body.get("results"); present {
		if _, isArray := results.([]any); !isArray {
			s.send(w, http.StatusBadRequest, badBody("`results` must be an array of { token, outcome } objects."))
			return
		}
	}
	if pv, present := body.get("protocolVersion"); present && pv != number("2") {
		s.send(w, http.StatusBadRequest, object{
			{"ok", false},
			{"reason", "protocol-mismatch"},
			{"message", "This page's reporter speaks protocol " + strings.TrimSuffix(string(render(pv)), "\n") +
				", but this relay (dtb relay, the receiving half of examples/playground/plugins/devToolbarAgent.ts) speaks protocol 2. Update the page's @nejcm/dev-toolbar or dtb so both sides match."},
			{"expected", 2},
			{"received", pv},
		})
		return
	}

	// A public name is what callers are told; a page never sends one (its id is
	// random: a UUID, or r-…), so a check-in under one is a process posing as the
	// page it names, and is refused before it can change anything.
	if rid, _ := body.get("reporterId"); rid != nil {
		if str, ok := rid.(string); ok && isPublicID(str) {
			s.send(w, http.StatusForbidden, object{
				{"ok", false},
				{"reason", "reserved-reporter-id"},
				{"message", "Refused: reporterId " + quote(str) + " has the form of the public names this relay gives pages (" +
					publicPrefix + " and " + fmt.Sprint(publicHex) + " hex digits). Callers see public names; a page checks in with its own reporterId."},
			})
			return
		}
	}
	pending, h := s.checkIn(body)
	if h != nil {
		select {
		case pending = <-h.ch:
		case <-r.Context().Done():
			s.abandonHold(h)
			return
		}
	}
	out := make([]any, len(pending))
	for i, c := range pending {
		out[i] = pendingEntry(c)
	}
	if err := s.sendErr(w, http.StatusOK, object{{"ok", true}, {"pending", out}}); err != nil && len(pending) > 0 {
		s.undelivered(pending)
	}
}

func (s *Server) postCommand(w http.ResponseWriter, r *http.Request, rawID, reporter string) {
	id, err := url.PathUnescape(rawID)
	// decodeURIComponent also refuses escapes that decode to invalid UTF-8.
	if err != nil || !utf8.ValidString(id) {
		s.send(w, http.StatusBadRequest, object{
			{"ok", false},
			{"reason", "bad-command-id"},
			{"message", "The command id in the path is not valid percent-encoding: " + rawID},
		})
		return
	}
	if id == "" {
		s.send(w, http.StatusNotFound, object{
			{"ok", false},
			{"reason", "unknown-route"},
			{"message", "No command id in the path."},
		})
		return
	}
	raw, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var input any
	text := jsTrim(string(raw))
	hasInput := text != ""
	if hasInput {
		if input, err = parseJSON([]byte(text)); err != nil {
			s.send(w, http.StatusBadRequest, badBody("The request body must be JSON (the command's input) or empty: "+err.Error()))
			return
		}
	}
	c, refusal := s.enqueue(id, input, hasInput, reporter)
	if refusal != nil {
		s.send(w, refusal.status, refusal.body)
		return
	}
	select {
	case rep := <-c.done:
		s.send(w, rep.status, rep.body)
	case <-r.Context().Done():
		// The caller left; the command stays queued and still runs on the page, as
		// upstream.
	}
}

// readCheckIn reads and parses a check-in. Over the cap it is read in a streaming
// pass (readOverCap) that discards the outcomes that do not fit, so the page that
// sent a big result keeps its slot; a body that is over the cap for any other
// reason, or cannot be read that way, is refused 400.
func (s *Server) readCheckIn(w http.ResponseWriter, r *http.Request) (any, bool) {
	b, ok := s.readUpTo(w, r, drainMax)
	if !ok {
		return nil, false
	}
	if len(b) <= maxBody {
		// Only zero bytes mean {}: whitespace is a JSON.parse failure upstream too.
		if len(b) == 0 {
			return object{}, true
		}
		v, err := parseJSON(b)
		if err != nil {
			s.send(w, http.StatusBadRequest, badBody(err.Error()))
			return nil, false
		}
		return v, true
	}
	counted := &countingReader{r: io.LimitReader(io.MultiReader(bytes.NewReader(b), r.Body), drainMax)}
	body, apart, err := readOverCap(counted, s.waitingToken)
	if err != nil || apart == 0 {
		// Not a check-in, or over the cap for another reason than a result (a
		// padded or huge snapshot): refused as the spec says.
		s.refuseOversize(w, r, true)
		return nil, false
	}
	bodyRead(r)
	s.logf("relay: a check-in of %d bytes, over the %d-byte cap: read, its %d result(s) each kept when within the cap by itself (else result-too-large), or left out when for no waiting command", counted.n, maxBody, apart)
	return body, true
}

// waitingToken: token is a command handed to a page and not yet answered.
func (s *Server) waitingToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.state.byToken[token]
	return c != nil && c.handed
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// limitBody gives a request's body BodyTimeout to arrive (a slow body is cut off
// and its connection closed), and lifts the deadline once the body has been read,
// so that a held check-in or a waiting command can wait as long as it must. An
// upgrade (the dev server's HMR websocket, proxied) is left alone.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.Header.Get("Upgrade") != "" {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
}

// deadlineBody lifts the read deadline at the end of the body (or when the
// handler says it has read what it wants, by bodyRead).
type deadlineBody struct {
	io.ReadCloser
	lift   func()
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done()
	}
	return n, err
}

func (b *deadlineBody) done() {
	if !b.lifted {
		b.lifted = true
		b.lift()
	}
}

// bodyRead lifts the body deadline of a request whose body has been read.
func bodyRead(r *http.Request) {
	if b, ok := r.Body.(*deadlineBody); ok {
		b.done()
	}
}

// readBody reads a request body up to the cap. Over the cap it answers the JSON 400
// itself and returns false.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, ok := s.readUpTo(w, r, maxBody)
	if ok && len(b) > maxBody {
		s.refuseOversize(w, r, true)
		return nil, false
	}
	return b, ok
}

// readUpTo reads a body up to the cap and one byte more (which says it is over),
// refusing at once one whose declared length is over limit, or over the cap with
// "Expect: 100-continue" (it has not been sent: do not ask for it). Within the cap
// the body deadline is lifted.
func (s *Server) readUpTo(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if r.ContentLength > limit || (r.ContentLength > maxBody && strings.EqualFold(r.Header.Get("Expect"), "100-continue")) {
		s.refuseOversize(w, r, false)
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		s.send(w, http.StatusBadRequest, badBody("could not read the body: "+err.Error()))
		return nil, false
	}
	if len(b) <= maxBody {
		bodyRead(r)
	}
	return b, true
}

// refuseOversize answers 400 bad-body and closes the connection, draining what the
// client is still sending first. The upstream destroys the stream, which over a real
// socket shows the client a reset instead of the answer (spec §8.3).
func (s *Server) refuseOversize(w http.ResponseWriter, r *http.Request, started bool) {
	rc := http.NewResponseController(w)
	// Full duplex lets the body be read after the answer is flushed (HTTP/1.1).
	_ = rc.EnableFullDuplex()
	w.Header().Set("Connection", "close")
	s.send(w, http.StatusBadRequest, badBody(fmt.Sprintf("body exceeds %d bytes", maxBody)))
	_ = rc.Flush()
	// A client waiting for "100 Continue" that we never sent has not sent the body.
	if !started && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	_ = rc.SetReadDeadline(time.Now().Add(drainWindow))
	_, _ = io.CopyN(io.Discard, r.Body, drainMax)
}

// send writes a relay answer: JSON.stringify(body, null, 2) + "\n".
func (s *Server) send(w http.ResponseWriter, status int, body any) {
	_ = s.sendErr(w, status, body)
}

// sendErr is send, saying whether the whole answer reached the connection.
func (s *Server) sendErr(w http.ResponseWriter, status int, body any) error {
	b := render(body)
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	defer rc.SetWriteDeadline(time.Time{}) // the connection may serve another request
	w.WriteHeader(status)
	if _, err := w.Write(b); err != nil {
		return err
	}
	return rc.Flush()
}

// deadlineWriter gives every write of an answer the write timeout: a client that
// stops reading loses its connection, one that keeps reading keeps it.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

func (w *deadlineWriter) Flush() { _ = w.rc.Flush() }

// clear lifts the deadline once the answer is written (keep-alive).
func (w *deadlineWriter) clear() { _ = w.rc.SetWriteDeadline(time.Time{}) }

// Unwrap lets http.ResponseController reach the connection (the proxy's flushes
// and protocol switches).
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// jsTrim is String.prototype.trim: JavaScript's whitespace and line terminators,
// which differ from unicode.IsSpace (U+FEFF yes, U+0085 no).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}

// trackingWriter remembers whether an answer was started, so a recovered panic
// never writes a second one, and its status for the request log.
type trackingWriter struct {
	http.ResponseWriter
	wrote  bool
	status int // for the request log; 0 when the caller left before an answer
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote, t.status = true, code
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.wrote, t.status = true, http.StatusOK
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
