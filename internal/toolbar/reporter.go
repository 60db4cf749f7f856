package toolbar

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// anonymous is the reporter id the relay files id-less pages under (spec §4.4);
// such a page's snapshot has reporterId null and its commands ranIn "anonymous".
const anonymous = "anonymous"

// reporterWatch bounds how long dtb watches a one-slot relay for the named page's
// snapshot when another page's is stored: two of the reporter's snapshot intervals
// (1 s) plus a poll (0.5 s), so a page whose state changes is seen.
var reporterWatch = 2500 * time.Millisecond

const reporterPoll = 100 * time.Millisecond

// Relay is the relay transport; Reporter, when set, targets one page and dtb
// verifies every answer came from it: the relay may be the upstream middleware,
// which ignores ?reporter= and keeps one slot (docs/relay.md).
type Relay struct {
	Client   Client
	Reporter string

	// verified is the connection of the last answer that proved to be Reporter's.
	verified *Connection
}

// Client is the relay client the transport uses (*relayclient.Client).
type Client interface {
	Base() string
	State(ctx context.Context, reporter string) (json.RawMessage, error)
	Commands(ctx context.Context, reporter string) (json.RawMessage, error)
	Run(ctx context.Context, id string, input json.RawMessage, reporter string) (json.RawMessage, error)
}

func (r *Relay) State(ctx context.Context) (json.RawMessage, error) {
	return r.targeted(ctx, r.Client.State)
}

func (r *Relay) Commands(ctx context.Context) (json.RawMessage, error) {
	return r.targeted(ctx, r.Client.Commands)
}

// Run runs the command. With a Reporter it first makes sure the relay can only
// hand the command to that page (its snapshot is the one stored and no other page
// reports), and afterwards that the page that ran it (ranIn) is that page.
func (r *Relay) Run(ctx context.Context, id string, input json.RawMessage) (json.RawMessage, error) {
	if r.Reporter == "" {
		return r.Client.Run(ctx, id, input, "")
	}
	if r.verified == nil {
		if _, err := r.targeted(ctx, r.Client.Commands); err != nil {
			return nil, err
		}
	}
	if c := r.verified; c.Ambiguous {
		return nil, r.cannotTarget(fmt.Sprintf("%d pages report to the relay at %s, which hands a command to whichever page checks in next, so %q cannot be run in %s alone; nothing ran", c.Reporters, r.Client.Base(), id, r.Reporter), c).With("command", id)
	}
	doc, err := r.Client.Run(ctx, id, input, r.Reporter)
	var ranIn string
	if err != nil {
		e := output.AsError(err)
		if raw, ok := e.Details["ranIn"].(json.RawMessage); ok && json.Unmarshal(raw, &ranIn) == nil && !r.is(ranIn) {
			return nil, r.ranElsewhere(id, ranIn, nil).With("outcomeReason", e.Reason)
		}
		return nil, err
	}
	var out struct {
		RanIn *string `json:"ranIn"`
	}
	if json.Unmarshal(doc, &out) == nil && out.RanIn != nil && !r.is(*out.RanIn) {
		return nil, r.ranElsewhere(id, *out.RanIn, doc)
	}
	return doc, nil
}

func (r *Relay) ranElsewhere(id, ranIn string, doc json.RawMessage) *output.Error {
	e := r.cannotTarget(fmt.Sprintf("%q ran in page %s, not %s: the relay at %s does not route commands by reporter", id, ranIn, r.Reporter, r.Client.Base()), r.verified).With("command", id).With("ranIn", ranIn)
	if doc != nil {
		e.With("outcome", doc)
	}
	return e
}

// cannotTarget is wrong-reporter: what went wrong, then what to do about it.
func (r *Relay) cannotTarget(what string, c *Connection) *output.Error {
	e := output.Errorf("wrong-reporter", "%s. This relay keeps one slot and ignores ?reporter= (the upstream dev-server middleware does): close the other tabs of the app so only %s reports, or open the app through `dtb relay`, which targets pages by reporter", what, r.Reporter).With("reporter", r.Reporter)
	if c != nil {
		e.With("connection", c)
	}
	return e
}

// is reports whether a reporter id from the relay (reporterId, ranIn) names the
// targeted page.
func (r *Relay) is(id string) bool {
	return id == r.Reporter || (id == "" && r.Reporter == anonymous)
}

// targeted fetches a document (state or commands) and, with a Reporter, returns it
// only when it is that page's: connection.reporterId names it. A one-slot relay
// stores the latest snapshot of any page, so while another page's is stored dtb
// watches for a while for the named page's; a page the relay does not know is
// no-such-reporter.
func (r *Relay) targeted(ctx context.Context, fetch func(context.Context, string) (json.RawMessage, error)) (json.RawMessage, error) {
	if r.Reporter == "" {
		return fetch(ctx, "")
	}
	deadline := time.Now().Add(reporterWatch)
	var seen []string
	for {
		doc, err := fetch(ctx, r.Reporter)
		if err != nil {
			return nil, r.unknownReporter(err)
		}
		c, ok := connectionOf(doc)
		if !ok {
			return nil, r.cannotTarget(fmt.Sprintf("the answer from %s has no connection.reporterId, so dtb cannot tell which page it came from", r.Client.Base()), nil)
		}
		stored := c.reporter()
		if r.is(stored) {
			r.verified = c
			return doc, nil
		}
		if !slices.Contains(seen, stored) {
			seen = append(seen, stored)
		}
		// A relay that answers a named page with another's snapshot keeps one slot
		// (dtb relay answers for the page or refuses). Its count of pages cannot
		// say which page the stored snapshot is of: the page it names may have
		// gone (closed tabs leave their snapshot) while the named one, idle, sends
		// none. Only a relay that counts no page at all rules the named one out.
		if c.Reporters == 0 {
			return nil, r.noSuchReporter(seen, c)
		}
		if time.Now().After(deadline) {
			return nil, r.cannotTarget(fmt.Sprintf("the relay at %s holds the snapshot of page %s, not %s, and in %s no snapshot of %s came (it counts %d page(s) reporting). Either no page %s reports to it, or it does and is idle: a page sends a snapshot only when its state changes, and a closed tab's snapshot stays stored until another page sends one (change something in the page or reload it)",
				r.Client.Base(), quoteList(seen), r.Reporter, reporterWatch, r.Reporter, c.Reporters, r.Reporter), c).With("seenReporterIds", seen)
		}
		select {
		case <-ctx.Done():
			return nil, output.AsError(ctx.Err())
		case <-time.After(reporterPoll):
		}
	}
}

func (r *Relay) noSuchReporter(seen []string, c *Connection) *output.Error {
	// A one-slot relay shows only the id of the page whose snapshot it stores.
	return output.Errorf("no-such-reporter", "no page with reporterId %q reports to the relay at %s: it counts %d page(s) reporting and holds the snapshot of %s; connection.reporterId of `dtb state` names the page whose state it shows", r.Reporter, r.Client.Base(), c.Reporters, quoteList(seen)).With("reporter", r.Reporter).With("reporterIds", seen).With("connection", c)
}

// unknownReporter turns dtb relay's answer to a reporter it has never seen (503
// no-page-connected listing the reporterIds it knows) into no-such-reporter.
func (r *Relay) unknownReporter(err error) error {
	e := output.AsError(err)
	raw, ok := e.Details["reporterIds"].(json.RawMessage)
	if e.Reason != "no-page-connected" || !ok {
		return err
	}
	var ids []string
	if json.Unmarshal(raw, &ids) != nil || slices.Contains(ids, r.Reporter) {
		return err
	}
	ne := output.Errorf("no-such-reporter", "no page with reporterId %q reports to the relay at %s (known: %s)", r.Reporter, r.Client.Base(), quoteList(ids)).With("reporter", r.Reporter).With("reporterIds", ids)
	if conn, ok := e.Details["connection"]; ok {
		ne.With("connection", conn)
	}
	ne.Cause = e
	return ne
}

func quoteList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	b, _ := json.Marshal(ids)
	return string(b[1 : len(b)-1])
}

// connectionOf decodes a document's connection object.
func connectionOf(doc json.RawMessage) (*Connection, bool) {
	var s struct {
		Connection *Connection `json:"connection"`
	}
	if err := json.Unmarshal(doc, &s); err != nil || s.Connection == nil {
		return nil, false
	}
	return s.Connection, true
}
