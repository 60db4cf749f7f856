package toolbar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/itchyny/gojq"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/relayclient"
)

// Transport reaches one toolbar: through a relay or over CDP. Both return the same
// documents, so one jq filter works on either.
type Transport interface {
	// State is the state document: snapshot keys, connection, extensions.
	State(ctx context.Context) (json.RawMessage, error)
	// Commands is {instanceId, allowRun, connection, commands}.
	Commands(ctx context.Context) (json.RawMessage, error)
	// Run runs a command; input nil means none. A page refusal is an error.
	Run(ctx context.Context, id string, input json.RawMessage) (json.RawMessage, error)
}

// RunChecked runs command id with input in through t; with check, the input
// is first checked against the command's declared fields (Check), and a
// run that any of several pages may take is warned of (warn; reporter: the
// page the caller named, "" for none).
func RunChecked(ctx context.Context, t Transport, id string, in Input, check bool, reporter string, warn func(Warning)) (json.RawMessage, error) {
	body := in.Value
	if check {
		doc, err := t.Commands(ctx)
		if err != nil {
			return nil, err
		}
		for _, w := range RunWarnings(doc, reporter) {
			warn(w)
		}
		list, err := CommandList(doc)
		if err != nil {
			return nil, err
		}
		cmd, err := FindCommand(list, id)
		if err != nil {
			return nil, err
		}
		if body, err = Check(cmd, in); err != nil {
			return nil, err
		}
	}
	return t.Run(ctx, id, body)
}

// Connection is the part of the state's connection object dtb acts on.
type Connection struct {
	Connected  bool    `json:"connected"`
	Stale      bool    `json:"stale"`
	Ambiguous  bool    `json:"ambiguous"`
	Reporters  int     `json:"reporters"`
	AgeMs      int64   `json:"ageMs"`
	ReporterID *string `json:"reporterId"`
	// Busy is dtb relay's addition: the page is running a command (and sends no
	// check-ins until it finishes). Absent from the upstream relay's answers.
	Busy *relayclient.Busy `json:"busy,omitempty"`
}

// reporter is the id of the page whose snapshot the relay holds ("anonymous" for
// a page without one, as the relay files it).
func (c *Connection) reporter() string {
	if c.ReporterID == nil || *c.ReporterID == "" {
		return anonymous
	}
	return *c.ReporterID
}

// Warning is something the caller should tell the user on stderr.
type Warning struct {
	Reason  string
	Message string
}

// CheckConnection looks at a state (or commands) document's connection: stale
// and ambiguous are warnings, or failures when fresh / strict ask for it. A busy
// page is connected: its state is the one from before the command it is running.
// With reporter set, a document that is that page's is not ambiguous.
func CheckConnection(doc json.RawMessage, fresh, strict bool, reporter string) ([]Warning, error) {
	var s struct {
		Connection *struct {
			Connection
			Busy json.RawMessage `json:"busy"`
		} `json:"connection"`
	}
	if err := json.Unmarshal(doc, &s); err != nil || s.Connection == nil {
		return nil, nil
	}
	c := s.Connection.Connection
	c.Busy = relayclient.BusyOf(s.Connection.Busy)
	var warns []Warning
	switch {
	case c.Busy != nil:
		warns = append(warns, Warning{"busy", c.Busy.Describe() + "; the state is from before it started"})
	case c.Stale:
		if fresh {
			return nil, output.Errorf("stale", "the page's last check-in is older than the relay's staleMs: the tab is probably closed or reloading, or running a long command (the page checks in again when it finishes; dtb relay reports that as busy) (state is from %d ms ago)", c.AgeMs).With("connection", c)
		}
		warns = append(warns, Warning{"stale", "the state is stale: the page has not checked in recently (use --fresh to fail instead)"})
	}
	if c.Ambiguous && (reporter == "" || c.reporter() != reporter) {
		if strict {
			return nil, output.Errorf("ambiguous-reporters", "%d pages report to this relay; the state may come from either (pick one with --reporter)", c.Reporters).With("connection", c)
		}
		// --reporter only helps on a relay that keeps a slot per page (dtb relay);
		// on the upstream one-slot relay the way out is one tab.
		warns = append(warns, Warning{"ambiguous", "several pages report to this relay; the state may come from any of them (through dtb relay pick one with --reporter ID, from connection.reporterId; a one-slot relay such as the dev server's own cannot target a page: close the other tabs; --strict fails instead)"})
	}
	return warns, nil
}

// RunWarnings is what a command list (dtb run's check) says about where the run
// goes: an untargeted run on a relay several pages report to goes to any of them.
func RunWarnings(doc json.RawMessage, reporter string) []Warning {
	c, ok := connectionOf(doc)
	if !ok || !c.Ambiguous || reporter != "" {
		return nil
	}
	return []Warning{{"ambiguous", fmt.Sprintf("%d pages report to this relay; the command goes to whichever checks in next (through dtb relay pick one with --reporter ID, from connection.reporterId; on a one-slot relay close the other tabs)", c.Reporters)}}
}

// WaitFor polls the state until pred is truthy on it and returns that state. Errors
// that a page coming up resolves (no page yet, relay not up yet) are retried; the
// last one is reported on timeout.
func WaitFor(ctx context.Context, t Transport, pred *gojq.Code, args map[string]string, interval time.Duration) (json.RawMessage, error) {
	var lastErr error
	var lastState json.RawMessage
	for {
		doc, err := t.State(ctx)
		if err == nil {
			lastState, lastErr = doc, nil
			outs, qerr := output.Query(ctx, pred, doc, args)
			switch {
			case qerr != nil && ctx.Err() == nil:
				return nil, qerr
			case qerr != nil:
				// The deadline came while the predicate ran on a fresh
				// state: the condition did not hold in time (below).
			case len(outs) > 0 && output.Truthy(outs[len(outs)-1]):
				return doc, nil
			}
		} else {
			if !retryable(err) {
				return nil, err
			}
			// A request cut short by the deadline (the command's, or the
			// relay client's own share of it) tells nothing new.
			if ctx.Err() == nil && output.AsError(err).Reason != "timeout" {
				lastErr = err
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil, output.AsError(ctx.Err()) // Ctrl-C: interrupted, not timeout
			}
			e := output.Errorf("timeout", "the --until condition did not hold in time")
			if lastErr != nil {
				le := output.AsError(lastErr)
				e.Message += "; last error: " + le.Message
				e.With("lastReason", le.Reason)
			} else if lastState != nil {
				e.With("lastState", lastState)
			}
			return nil, e
		case <-time.After(interval):
		}
	}
}

func retryable(err error) bool {
	switch output.AsError(err).Reason {
	case "no-page-connected", "relay-unreachable", "server-closing", "no-toolbar", "stale", "timeout", "torn-down", "no-browser", "browser-gone",
		"page-busy", "no-such-reporter", "wrong-reporter":
		return true
	}
	return false
}

// CommandList decodes the commands array of a commands document.
func CommandList(doc json.RawMessage) ([]Command, error) {
	var s struct {
		Commands []Command `json:"commands"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, output.Errorf("not-a-relay", "the commands document is not readable: %v", err)
	}
	return s.Commands, nil
}
