package relayclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dtb-cli/dtb/internal/output"
)

// Busy says which command a busy page is running and for how long.
//
// Wire format (dtb relay's addition to the spec's connection object, §4.5; the
// upstream relay never sends it): while a page has taken a command and not yet
// reported its outcome, the connection object of every answer that carries one
// (GET state, GET commands, and refusals such as 503 no-page-connected and 504
// timeout) has
//
//	"busy": {"commandId": "demo.sleep", "ageMs": 3070}
//
// commandId is the id of the command the page took first among those it has not
// answered, ageMs the ms since it took it. Absent, null or false: not busy. A
// relay may keep saying connected while busy; if it says stale, dtb reads the
// page as busy, not gone (a warning on state, page-busy on run).
type Busy struct {
	CommandID string `json:"commandId,omitempty"`
	AgeMs     int64  `json:"ageMs"`
}

// UnmarshalJSON is tolerant: busy is additive (dtb relay's, not the spec's), so
// a shape dtb does not know (true, a string) reads as busy without details.
func (b *Busy) UnmarshalJSON(data []byte) error {
	var obj struct {
		CommandID any `json:"commandId"`
		AgeMs     any `json:"ageMs"`
	}
	if json.Unmarshal(data, &obj) == nil {
		if id, ok := obj.CommandID.(string); ok {
			b.CommandID = id
		}
		if ms, ok := obj.AgeMs.(float64); ok {
			b.AgeMs = int64(ms)
		}
	}
	return nil
}

// BusyOf decodes connection.busy; nil when the page is not busy.
func BusyOf(raw json.RawMessage) *Busy {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false":
		return nil
	}
	b := &Busy{}
	_ = b.UnmarshalJSON(raw)
	return b
}

// Describe says it in words.
func (b *Busy) Describe() string {
	what := "a command"
	if b.CommandID != "" {
		what = fmt.Sprintf("%q", b.CommandID)
	}
	return fmt.Sprintf("the page is busy running %s (for %d ms) and sends no check-ins until it finishes", what, b.AgeMs)
}

// explainBusy reads a relay refusal's connection.busy: a page that is busy is
// not gone, so no-page-connected becomes page-busy, and a timeout says why.
// The connection is the page of reporter when the request named one; another
// page's being busy (the relay describes its latest page when reporter has
// none) says nothing of it.
func explainBusy(e *output.Error, obj map[string]json.RawMessage, reporter string) {
	var conn struct {
		Busy       json.RawMessage `json:"busy"`
		ReporterID string          `json:"reporterId"`
	}
	if json.Unmarshal(obj["connection"], &conn) != nil {
		return
	}
	if reporter != "" && conn.ReporterID != "" && conn.ReporterID != reporter {
		return
	}
	b := BusyOf(conn.Busy)
	if b == nil {
		return
	}
	switch e.Reason {
	case "no-page-connected":
		e.Reason = "page-busy"
		e.Message = b.Describe() + "; retry when it is done (the relay says: " + e.Message + ")"
	case "timeout":
		// The relay's text ends a sentence; "x.; y" reads as a typo.
		e.Message = strings.TrimSuffix(e.Message, ".") + "; " + b.Describe()
	default:
		return
	}
	e.With("busy", b)
}
