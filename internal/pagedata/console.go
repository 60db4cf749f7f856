// Package pagedata reads and changes what a tab keeps about itself: its console
// and uncaught exceptions, the requests it made, its cookies and its web
// storage. Every reader works on a fresh connection made after the fact, so it
// reports what the browser kept before dtb attached (see docs/ci.md).
package pagedata

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// Levels, lowest first. A filter or a gate at a level takes that level and
// every level above it.
var levels = []string{"debug", "info", "warning", "error"}

// ParseLevel validates a --level or --fail-on value ("warn" and "log" are
// accepted for warning and info).
func ParseLevel(s, flag string) (string, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if alias, ok := map[string]string{"warn": "warning", "log": "info", "verbose": "debug"}[l]; ok {
		l = alias
	}
	if levelRank(l) >= 0 {
		return l, nil
	}
	return "", output.Usage("%s must be one of %s, not %q", flag, strings.Join(levels, ", "), s)
}

func levelRank(l string) int {
	for i, x := range levels {
		if x == l {
			return i
		}
	}
	return -1
}

// ConsoleMessage is one console message, uncaught exception or browser log
// entry of the tab.
type ConsoleMessage struct {
	Level string `json:"level"` // debug, info, warning, error
	// Source: console (a console.* call), exception (uncaught, or a promise
	// rejection nobody handled), or the browser's own log: network, violation,
	// intervention, deprecation, security, javascript, other …
	Source string `json:"source"`
	// Type is the console method (log, warning, error, assert, table …) or,
	// for an exception, "exception".
	Type   string `json:"type"`
	Text   string `json:"text"`
	URL    string `json:"url,omitempty"`
	Line   int    `json:"line,omitempty"`   // 1-based
	Column int    `json:"column,omitempty"` // 1-based
	Time   string `json:"time"`             // RFC 3339, UTC, milliseconds
	Stack  string `json:"stack,omitempty"`  // exceptions (and console.trace/assert)

	at          time.Time
	exceptionID int
}

// ConsoleOptions filter and extend ReadConsole.
type ConsoleOptions struct {
	Level string        // the lowest level kept ("" keeps all)
	Since time.Duration // only messages this recent (0: all)
	Wait  time.Duration // keep listening this long for new messages
	Clear bool          // empty the browser's buffers after reading
	// MaxBytes is the output ceiling: a message over it is read through and
	// dropped, never held, and the read fails result-too-large (0: none).
	MaxBytes int64
}

// ConsoleResult is what `dtb console` prints.
type ConsoleResult struct {
	Tab      cdp.TabRef       `json:"tab"`
	URL      string           `json:"url"`
	Count    int              `json:"count"`
	Counts   map[string]int   `json:"counts"` // per level, before --level and --since
	Messages []ConsoleMessage `json:"messages"`
	Cleared  bool             `json:"cleared,omitempty"`
	// RecordedSince: the list is the session host's record of the tab,
	// kept since the host first used it, across documents.
	RecordedSince string `json:"recordedSince,omitempty"`
}

// replayIdle is how long the reader waits for the next replayed message once
// the browser answered the enable calls: every replayed message was sent
// before the answer, so this is only goroutine hand-over.
const replayIdle = 40 * time.Millisecond

// ReadConsole collects the tab's console: the messages the browser kept
// (V8 replays its stored console calls and exceptions when the Runtime domain
// is enabled on a new session, Blink its log entries when the Log domain is),
// then, with o.Wait, the new ones for that long.
//
// Through the session host a tab it has used has a record of its own (every
// document since the host's first use, up to the record limit): that record
// is the list, "recordedSince" says from when.
func ReadConsole(ctx context.Context, p *cdp.Page, o ConsoleOptions) (*ConsoleResult, error) {
	var since time.Time
	if o.Since > 0 {
		since = time.Now().Add(-o.Since)
	}
	if _, _, ok := Recording.consoleRecord(p.ID); ok {
		return readConsoleRecord(ctx, p, o, since)
	}
	if o.MaxBytes > 0 {
		// An event wraps a message in at most a few KiB of envelope.
		p.LimitMessages(o.MaxBytes + 4096)
		defer p.LimitMessages(0)
	}
	events, cancel := p.Events("*")
	defer cancel()
	for _, enable := range []proto.Command[proto.Empty, proto.Empty]{log.Enable, runtime.Enable} {
		if _, err := proto.Call(ctx, p, enable, proto.Empty{}); err != nil {
			return nil, cdp.WrapCDP(ctx, err, "reading the console")
		}
	}
	c := &collector{byException: map[int]int{}}
	idle := time.NewTimer(replayIdle)
	defer idle.Stop()
	var waitEnd <-chan time.Time
replay:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, output.Errorf("torn-down", "the tab went away while reading its console").With("tab", p.ID)
			}
			c.add(ev)
			if waitEnd == nil {
				idle.Reset(replayIdle)
			}
		case <-idle.C:
			if o.Wait <= 0 {
				break replay
			}
			waitEnd = time.After(o.Wait)
		case <-waitEnd:
			break replay
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "reading the console")
		}
	}
	if size := p.DroppedEvent(); size > 0 && o.MaxBytes > 0 {
		return nil, output.TooLarge(size, o.MaxBytes)
	}
	return consoleResult(ctx, p, o, since, c.messages())
}

// readConsoleRecord is ReadConsole from the session host's record of the
// tab: after o.Wait, what the record holds.
func readConsoleRecord(ctx context.Context, p *cdp.Page, o ConsoleOptions, since time.Time) (*ConsoleResult, error) {
	if o.Wait > 0 {
		select {
		case <-time.After(o.Wait):
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "reading the console")
		}
	}
	msgs, from, ok := Recording.consoleRecord(p.ID)
	if !ok {
		return nil, output.Errorf("torn-down", "the tab went away while reading its console").With("tab", p.ID)
	}
	if o.Clear {
		Recording.clearConsole(p.ID)
	}
	res, err := consoleResult(ctx, p, o, since, msgs)
	if res != nil {
		res.RecordedSince = from.UTC().Format(timeLayout)
	}
	return res, err
}

// consoleResult is the result of msgs: filtered by level and since, counted
// per level, the tab's URL; with o.Clear the browser's buffers emptied.
func consoleResult(ctx context.Context, p *cdp.Page, o ConsoleOptions, since time.Time, msgs []ConsoleMessage) (*ConsoleResult, error) {
	res := &ConsoleResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, Counts: map[string]int{}, Messages: []ConsoleMessage{}}
	if raw, err := p.Evaluate(ctx, "location.href", false); err == nil {
		json.Unmarshal(raw, &res.URL)
	}
	if o.Clear {
		for _, clear := range []proto.Command[proto.Empty, proto.Empty]{runtime.DiscardConsoleEntries, log.Clear} {
			if _, err := proto.Call(ctx, p, clear, proto.Empty{}); err != nil {
				return nil, cdp.WrapCDP(ctx, err, "clearing the console")
			}
		}
		res.Cleared = true
	}
	min := levelRank(o.Level)
	for _, m := range msgs {
		res.Counts[m.Level]++
		if levelRank(m.Level) < min || (!since.IsZero() && m.at.Before(since)) {
			continue
		}
		res.Messages = append(res.Messages, m)
	}
	for _, l := range levels {
		res.Counts[l] += 0
	}
	res.Count = len(res.Messages)
	return res, nil
}

// FailOn is the console-errors error when any message of r is at or above
// level, nil otherwise. The error names the first few offending messages.
func (r *ConsoleResult) FailOn(level string) error {
	var bad []ConsoleMessage
	for _, m := range r.Messages {
		if levelRank(m.Level) >= levelRank(level) {
			bad = append(bad, m)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	first := bad[0]
	e := output.Errorf("console-errors", "%d console message(s) at level %s or above; first: %s", len(bad), level, oneLine(first.Text, 200)).
		With("count", len(bad)).With("level", level).With("url", r.URL).With("tab", r.Tab.ID)
	shown := bad
	if len(shown) > 10 {
		shown = shown[:10]
	}
	e.With("messages", shown)
	return e
}

func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// collector turns CDP events into messages, in arrival order.
type collector struct {
	list        []ConsoleMessage
	byException map[int]int // exceptionId → index in list
	revoked     map[int]bool
}

// formatStack renders a stack as V8 does ("    at fn (url:line:col)").
func formatStack(s *runtime.StackTrace) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for i, f := range s.CallFrames {
		if i > 0 {
			b.WriteByte('\n')
		}
		loc := fmt.Sprintf("%s:%d:%d", f.URL, f.LineNumber+1, f.ColumnNumber+1)
		if f.FunctionName != "" {
			fmt.Fprintf(&b, "    at %s (%s)", f.FunctionName, loc)
		} else {
			fmt.Fprintf(&b, "    at %s", loc)
		}
	}
	return b.String()
}

// objectText is the object as the console shows it in one line of text.
func objectText(o *runtime.RemoteObject) string {
	switch {
	case o == nil:
		return ""
	case o.Type == "string":
		var s string
		json.Unmarshal(o.Value, &s)
		return s
	case o.Type == "undefined":
		return "undefined"
	case o.Subtype == "null":
		return "null"
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case o.Description != "":
		return o.Description
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return string(o.Type)
}

// timeLayout is RFC 3339 with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func msTime(ms float64) time.Time { return time.UnixMicro(int64(ms * 1000)).UTC() }

func (c *collector) add(ev cdp.Event) {
	if e, ok := cdp.Decode(runtime.ConsoleAPICalled, ev); ok {
		typ := string(e.Type)
		m := ConsoleMessage{Level: consoleLevel(typ), Source: "console", Type: typ, Text: formatArgs(e.Args), at: msTime(float64(e.Timestamp))}
		if typ == "assert" && m.Text == "" {
			m.Text = "Assertion failed"
		}
		if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
			f := e.StackTrace.CallFrames[0]
			m.URL, m.Line, m.Column = f.URL, int(f.LineNumber)+1, int(f.ColumnNumber)+1
			if typ == "trace" || typ == "assert" {
				m.Stack = formatStack(e.StackTrace)
			}
		}
		c.push(m)
	} else if e, ok := cdp.Decode(runtime.ExceptionThrown, ev); ok {
		d := e.ExceptionDetails
		if d == nil {
			d = &runtime.ExceptionDetails{}
		}
		m := ConsoleMessage{Level: "error", Source: "exception", Type: "exception", URL: d.URL, Line: int(d.LineNumber) + 1, Column: int(d.ColumnNumber) + 1, at: msTime(float64(e.Timestamp)), exceptionID: int(d.ExceptionID)}
		text := d.Text
		if d.Exception != nil {
			desc := objectText(d.Exception)
			first, stack, _ := strings.Cut(desc, "\n")
			if text == "" {
				text = first
			} else {
				text += " " + first
			}
			m.Stack = strings.TrimRight(stack, "\n")
		}
		if m.Stack == "" {
			m.Stack = formatStack(d.StackTrace)
		}
		m.Text = text
		if d.URL == "" && d.StackTrace != nil && len(d.StackTrace.CallFrames) > 0 {
			f := d.StackTrace.CallFrames[0]
			m.URL, m.Line, m.Column = f.URL, int(f.LineNumber)+1, int(f.ColumnNumber)+1
		}
		c.byException[m.exceptionID] = len(c.list)
		c.push(m)
	} else if e, ok := cdp.Decode(runtime.ExceptionRevoked, ev); ok {
		// A rejection reported as unhandled got a handler later.
		if c.revoked == nil {
			c.revoked = map[int]bool{}
		}
		c.revoked[int(e.ExceptionID)] = true
	} else if e, ok := cdp.Decode(logEntryAdded, ev); ok && e.Entry != nil {
		en := e.Entry
		lvl := string(en.Level)
		if lvl == "verbose" {
			lvl = "debug"
		}
		m := ConsoleMessage{Level: lvl, Source: string(en.Source), Type: string(en.Level), Text: en.Text, URL: en.URL, at: msTime(float64(en.Timestamp))}
		if en.LineNumber != nil {
			m.Line = int(*en.LineNumber) + 1
		}
		c.push(m)
	}
}

// logEntryAdded is log.EntryAdded whose entry tells a line number of 0 from
// none (cdproto's int64 cannot): only an entry with a location has a line.
var logEntryAdded = proto.Event[struct {
	Entry *struct {
		log.Entry
		LineNumber *int64 `json:"lineNumber"`
	} `json:"entry"`
}]{Method: log.EntryAdded.Method}

func (c *collector) push(m ConsoleMessage) {
	m.Time = m.at.Format(timeLayout)
	c.list = append(c.list, m)
}

// bound drops the oldest messages beyond max.
func (c *collector) bound(max int) {
	if len(c.list) <= max {
		return
	}
	c.list = append([]ConsoleMessage(nil), c.list[len(c.list)-max:]...)
	c.byException = map[int]int{}
	for i, m := range c.list {
		if m.Source == "exception" {
			c.byException[m.exceptionID] = i
		}
	}
}

// messages are the collected messages in time order, revoked rejections left out.
func (c *collector) messages() []ConsoleMessage {
	out := make([]ConsoleMessage, 0, len(c.list))
	for _, m := range c.list {
		if m.Source == "exception" && c.revoked[m.exceptionID] {
			continue
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// consoleLevel maps a console method to its level as DevTools shows it.
func consoleLevel(typ string) string {
	switch typ {
	case "debug":
		return "debug"
	case "warning":
		return "warning"
	case "error", "assert":
		return "error"
	}
	return "info"
}

// formatArgs joins console arguments as the console prints them, applying
// the format specifiers of a leading string (%s %d %i %f %o %O %c %%).
func formatArgs(args []*runtime.RemoteObject) string {
	if len(args) == 0 {
		return ""
	}
	var parts []string
	rest := args
	if args[0] != nil && args[0].Type == "string" {
		format := objectText(args[0])
		rest = args[1:]
		var b strings.Builder
		for i := 0; i < len(format); i++ {
			ch := format[i]
			if ch != '%' || i+1 >= len(format) {
				b.WriteByte(ch)
				continue
			}
			spec := format[i+1]
			switch spec {
			case '%':
				b.WriteByte('%')
				i++
			case 's', 'd', 'i', 'f', 'o', 'O', 'c':
				i++
				if len(rest) == 0 {
					b.WriteByte('%')
					b.WriteByte(spec)
					continue
				}
				arg := rest[0]
				rest = rest[1:]
				switch spec {
				case 'c': // CSS: no text
				case 'd', 'i':
					if f, err := strconv.ParseFloat(objectText(arg), 64); err == nil {
						b.WriteString(strconv.FormatInt(int64(f), 10))
					} else {
						b.WriteString("NaN")
					}
				default:
					b.WriteString(objectText(arg))
				}
			default:
				b.WriteByte(ch)
			}
		}
		parts = append(parts, b.String())
	}
	for _, a := range rest {
		parts = append(parts, objectText(a))
	}
	return strings.Join(parts, " ")
}
