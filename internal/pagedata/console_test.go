package pagedata

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// pageRecord is the fixture's own account of what it logged.
type pageRecord struct {
	Level, Text string
}

func find(msgs []ConsoleMessage, text string) *ConsoleMessage {
	for i := range msgs {
		if strings.Contains(msgs[i].Text, text) {
			return &msgs[i]
		}
	}
	return nil
}

func reasonOf(err error) string {
	var e *output.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// TestConsole: what the page logged and threw before dtb attached comes back
// on a new connection, at the page's own levels; later messages too; the
// filters, the gate and --clear do what they say.
func TestConsole(t *testing.T) {
	s := testSession(t)
	first := openTab(t, s, fixture("console.html"))
	id := first.ID
	// Let the page's timers (the uncaught throws) run.
	evalJSON(t, first, "new Promise(r => setTimeout(r, 50))", nil)
	first.Close()

	ctx := tctx(t)
	p := connect(t, s, id)
	res, err := ReadConsole(ctx, p, ConsoleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var record []pageRecord
	evalJSON(t, p, "window.record", &record)
	if len(record) != 7 {
		t.Fatalf("the fixture recorded %d messages", len(record))
	}
	for _, want := range record {
		m := find(res.Messages, want.Text)
		if m == nil {
			t.Errorf("message %q (%s) not reported; got %+v", want.Text, want.Level, res.Messages)
			continue
		}
		if m.Level != want.Level {
			t.Errorf("%q: level %s, the page logged it at %s", want.Text, m.Level, want.Level)
		}
	}
	if m := find(res.Messages, "error at load"); m == nil || m.URL != fixture("console.html") || m.Line != 15 || m.Source != "console" || m.Type != "error" {
		t.Errorf("error at load: %+v", m)
	}
	if m := find(res.Messages, "log at load 42"); m == nil || m.Text != "log at load 42" {
		t.Errorf("format specifiers: %+v", m)
	}
	if m := find(res.Messages, "boom at load"); m == nil || m.Source != "exception" || !strings.Contains(m.Stack, "thrower") || m.Text != "Uncaught Error: boom at load" {
		t.Errorf("exception: %+v", m)
	}
	if m := find(res.Messages, "status of 404"); m == nil || m.Source != "network" || m.Level != "error" || !strings.HasSuffix(m.URL, "/__status__/404") {
		t.Errorf("the failed image load is not in the log: %+v", m)
	}
	if res.Counts["error"] != 4 || res.Counts["warning"] != 1 || res.Counts["debug"] != 1 || res.Counts["info"] != 2 {
		t.Errorf("counts %v", res.Counts)
	}
	for i := 1; i < len(res.Messages); i++ {
		if res.Messages[i].Time < res.Messages[i-1].Time {
			t.Errorf("not in time order: %s after %s", res.Messages[i].Time, res.Messages[i-1].Time)
		}
	}

	// Later messages, on yet another connection.
	time.Sleep(200 * time.Millisecond)
	mark := time.Now()
	evalJSON(t, connect(t, s, id), "later('x'), new Promise(r => setTimeout(r, 50))", nil)
	res, err = ReadConsole(ctx, connect(t, s, id), ConsoleOptions{Level: "warning", Since: time.Since(mark)})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range res.Messages {
		texts = append(texts, m.Level+": "+m.Text)
	}
	want := []string{"warning: warn later x", "error: error later x", "error: Uncaught TypeError: boom later x"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("--level warning --since: %q, want %q", texts, want)
	}
	if err := res.FailOn("error"); reasonOf(err) != "console-errors" {
		t.Errorf("fail-on error: %v", err)
	}
	res, _ = ReadConsole(ctx, connect(t, s, id), ConsoleOptions{Level: "debug"})
	if err := res.FailOn("error"); reasonOf(err) != "console-errors" || !strings.Contains(err.Error(), "6 console message(s)") {
		t.Errorf("fail-on error over all: %v", err)
	}

	// --clear empties the browser's buffers: the next reader sees only what
	// came after.
	if res, err = ReadConsole(ctx, connect(t, s, id), ConsoleOptions{Clear: true}); err != nil || !res.Cleared || res.Count == 0 {
		t.Fatalf("clear: %v %+v", err, res)
	}
	evalJSON(t, connect(t, s, id), "console.info('after clear'), 1", nil)
	res, err = ReadConsole(ctx, connect(t, s, id), ConsoleOptions{})
	if err != nil || res.Count != 1 || res.Messages[0].Text != "after clear" {
		t.Errorf("after clear: %v %+v", err, res)
	}
	if err := res.FailOn("warning"); err != nil {
		t.Errorf("fail-on warning with one info message: %v", err)
	}
}

// TestConsoleKeeps measures what the browser keeps for a new session: the
// last 1000 messages of the current document; a navigation starts afresh.
func TestConsoleKeeps(t *testing.T) {
	s := testSession(t)
	p := openTab(t, s, fixture("console.html"))
	evalJSON(t, p, "for (let i = 0; i < 1200; i++) console.log('n' + i); 1", nil)
	res, err := ReadConsole(tctx(t), connect(t, s, p.ID), ConsoleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var console int
	for _, m := range res.Messages {
		if m.Source != "network" {
			console++
		}
	}
	if console != 1000 || find(res.Messages, "n1199") == nil || find(res.Messages, "n199") != nil {
		t.Errorf("kept %d console messages (want the last 1000)", console)
	}
	if _, err := p.Navigate(tctx(t), fixture("ok.json"), "load"); err != nil {
		t.Fatal(err)
	}
	res, err = ReadConsole(tctx(t), connect(t, s, p.ID), ConsoleOptions{})
	if err != nil || res.Count != 0 {
		t.Errorf("after a navigation: %v %+v", err, res)
	}
}
