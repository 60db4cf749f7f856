package relay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// A check-in over the 4 MiB cap is almost always a page delivering one big result
// (a command that returned a lot). Refusing it with 400, as upstream does, wedges
// the page: its reporter re-sends the refused body at every tick and never checks
// in again. So the relay reads such a check-in in a streaming pass that keeps the
// small parts (reporterId, allowRun, snapshot, tokens) and discards every outcome
// that does not fit, answering its caller result-too-large with the size instead,
// and then handles the check-in as usual (200, so the page moves on).

// errNotCheckIn: the over-cap body is not a JSON object that can be read this way.
var errNotCheckIn = errors.New("not a readable check-in")

// overScanner walks JSON text from r, copying the bytes of the value being
// captured into buf until buf would pass budget.
type overScanner struct {
	r      *bufio.Reader
	n      int64 // bytes consumed
	buf    *bytes.Buffer
	over   bool // the capture passed the budget; buf is abandoned
	budget int  // bytes the kept parts may still use
	// waiting says whether a token is a command handed out and not yet answered:
	// each such result is kept when it fits in maxBody on its own. Several
	// results share one check-in when the page re-sends its outbox after a
	// failed check-in (spec §3.5), and a result that fits must not be refused
	// because another rode with it. A result for any other token (one already
	// delivered and re-sent, a repeat) is skipped unread: it would be ignored.
	waiting func(token string) bool
	seen    map[string]bool
}

func (s *overScanner) next() (byte, error) {
	b, err := s.r.ReadByte()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	s.n++
	if s.buf != nil && !s.over {
		if s.buf.Len() >= s.budget {
			s.over = true
		} else {
			s.buf.WriteByte(b)
		}
	}
	return b, nil
}

func (s *overScanner) peek() (byte, error) {
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			s.n++
			continue
		}
		return b, s.r.UnreadByte()
	}
}

func (s *overScanner) expect(want byte) error {
	b, err := s.peek()
	if err != nil {
		return err
	}
	if b != want {
		return errNotCheckIn
	}
	_, err = s.next()
	return err
}

// skip consumes one JSON value (copied into buf while capturing).
func (s *overScanner) skip(depth int) error {
	if depth > maxDepth {
		return errNotCheckIn
	}
	b, err := s.peek()
	if err != nil {
		return err
	}
	switch b {
	case '"':
		return s.str()
	case '{', '[':
		closing := byte('}')
		if b == '[' {
			closing = ']'
		}
		if _, err := s.next(); err != nil {
			return err
		}
		for first := true; ; first = false {
			c, err := s.peek()
			if err != nil {
				return err
			}
			if c == closing {
				_, err = s.next()
				return err
			}
			if !first {
				if err := s.expect(','); err != nil {
					return err
				}
			}
			if closing == '}' {
				if err := s.str(); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
	}
	// A literal or a number: what follows is checked when the kept text is parsed.
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return nil // EOF after a bare literal: the caller finds the missing "}"
		}
		if !(c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return s.r.UnreadByte()
		}
		_ = s.r.UnreadByte()
		if _, err := s.next(); err != nil {
			return err
		}
	}
}

func (s *overScanner) str() error {
	if err := s.expect('"'); err != nil {
		return err
	}
	for {
		b, err := s.next()
		if err != nil {
			return err
		}
		switch b {
		case '\\':
			if _, err := s.next(); err != nil {
				return err
			}
		case '"':
			return nil
		}
	}
}

// capture consumes one value and returns its text, or nil when it did not fit
// the budget (size is its length either way).
func (s *overScanner) capture(depth int) (raw []byte, size int64, err error) {
	if _, err := s.peek(); err != nil {
		return nil, 0, err
	}
	s.buf, s.over = &bytes.Buffer{}, false
	start := s.n
	err = s.skip(depth)
	size = s.n - start
	raw = s.buf.Bytes()
	if s.over {
		raw = nil
	} else {
		s.budget -= len(raw)
	}
	s.buf, s.over = nil, false
	return raw, size, err
}

// readOverCap reads an over-cap check-in from r and returns it as an ordinary
// check-in body: every member kept as sent, except members that did not fit in
// maxBody bytes all told, and results: the result of a waiting command (its
// token before its outcome, as the reporter sends it) is kept when its outcome
// fits in maxBody by itself, else its outcome is replaced by a result-too-large
// one giving its size; a result for no waiting command is left out; other
// results share the members' budget. apart counts the results read apart from
// the members (kept on their own budget, replaced, or left out): with none, the
// check-in is over the cap for another reason than its results.
func readOverCap(r io.Reader, waiting func(token string) bool) (body object, apart int, err error) {
	s := &overScanner{r: bufio.NewReaderSize(r, 64<<10), budget: maxBody, waiting: waiting, seen: map[string]bool{}}
	dropped := 0
	if err := s.expect('{'); err != nil {
		return nil, 0, err
	}
	for first := true; ; first = false {
		c, err := s.peek()
		if err != nil {
			return nil, 0, err
		}
		if c == '}' {
			break
		}
		if !first {
			if err := s.expect(','); err != nil {
				return nil, 0, err
			}
		}
		keyRaw, _, err := s.capture(1)
		if err != nil || keyRaw == nil {
			return nil, 0, errNotCheckIn
		}
		kv, err := parseJSON(keyRaw)
		if err != nil {
			return nil, 0, errNotCheckIn
		}
		key, _ := kv.(string)
		if err := s.expect(':'); err != nil {
			return nil, 0, err
		}
		if key == "results" {
			if c, err := s.peek(); err == nil && c == '[' {
				results, n, err := s.results()
				if err != nil {
					return nil, 0, err
				}
				dropped += n
				body.set(key, results)
				continue
			}
		}
		raw, _, err := s.capture(1)
		if err != nil {
			return nil, 0, err
		}
		if raw == nil {
			continue // a member too big to keep (a huge snapshot): left out
		}
		v, err := parseJSON(raw)
		if err != nil {
			return nil, 0, errNotCheckIn
		}
		body.set(key, v)
	}
	if _, err := s.next(); err != nil { // the closing brace
		return nil, 0, err
	}
	for {
		b, err := s.r.ReadByte()
		if err == io.EOF {
			return body, dropped, nil
		}
		if err != nil {
			return nil, 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
		default:
			return nil, 0, errNotCheckIn
		}
	}
}

// results reads the results array: each entry's token is kept, its outcome kept
// when it fits.
func (s *overScanner) results() ([]any, int, error) {
	var out []any
	dropped := 0
	if err := s.expect('['); err != nil {
		return nil, 0, err
	}
	for first := true; ; first = false {
		c, err := s.peek()
		if err != nil {
			return nil, 0, err
		}
		if c == ']' {
			_, err = s.next()
			return append([]any{}, out...), dropped, err
		}
		if !first {
			if err := s.expect(','); err != nil {
				return nil, 0, err
			}
		}
		if c, err = s.peek(); err != nil {
			return nil, 0, err
		}
		if c != '{' {
			raw, _, err := s.capture(2)
			if err != nil {
				return nil, 0, err
			}
			if raw != nil {
				v, err := parseJSON(raw)
				if err != nil {
					return nil, 0, errNotCheckIn
				}
				out = append(out, v)
			}
			continue
		}
		entry, big, err := s.entry()
		if err != nil {
			return nil, 0, err
		}
		if big {
			dropped++
		}
		if entry != nil {
			out = append(out, entry)
		}
	}
}

// entry reads one result; apart is true when its outcome was read apart from the
// members' budget (kept on its own, replaced, or left out), and entry is nil when
// the whole result is left out.
func (s *overScanner) entry() (entry object, apart bool, err error) {
	big, skipped, own := false, false, false
	token := ""
	defer func() {
		if skipped && err == nil {
			entry = nil
		}
		apart = err == nil && (big || skipped || own)
	}()
	if err := s.expect('{'); err != nil {
		return nil, false, err
	}
	for first := true; ; first = false {
		c, err := s.peek()
		if err != nil {
			return nil, false, err
		}
		if c == '}' {
			_, err = s.next()
			return entry, big, err
		}
		if !first {
			if err := s.expect(','); err != nil {
				return nil, false, err
			}
		}
		keyRaw, _, err := s.capture(3)
		if err != nil || keyRaw == nil {
			return nil, false, errNotCheckIn
		}
		kv, err := parseJSON(keyRaw)
		if err != nil {
			return nil, false, errNotCheckIn
		}
		key, _ := kv.(string)
		if err := s.expect(':'); err != nil {
			return nil, false, err
		}
		if key == "outcome" && token != "" {
			if s.seen[token] || !s.waiting(token) {
				skipped = true
				if err := s.skip(3); err != nil {
					return nil, false, err
				}
				continue
			}
			s.seen[token] = true
			own = true
		}
		shared := s.budget
		if key == "outcome" && token != "" {
			s.budget = maxBody // its own: see overScanner.waiting
		}
		raw, size, err := s.capture(3)
		if key == "outcome" && token != "" {
			s.budget = shared
		}
		if err != nil {
			return nil, false, err
		}
		if raw == nil {
			if key != "outcome" {
				continue
			}
			big = true
			entry.set(key, tooLargeOutcome(size))
			continue
		}
		v, err := parseJSON(raw)
		if err != nil {
			return nil, false, errNotCheckIn
		}
		if t, ok := v.(string); ok && key == "token" {
			token = t
		}
		entry.set(key, v)
	}
}

// tooLargeOutcome stands for a result the relay could not carry.
func tooLargeOutcome(size int64) object {
	return object{
		{"ok", false},
		{"reason", "result-too-large"},
		{"error", fmt.Sprintf("The page's result is %d bytes, which does not fit in a check-in (the relay reads at most %d bytes of one): it was discarded. The command did run; return less (or write it somewhere and return where).", size, maxBody)},
		{"bytes", size},
		{"maxBytes", maxBody},
	}
}
