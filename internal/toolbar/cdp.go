package toolbar

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/bridge.js
var bridgeJS string

// DefaultGlobal is the bridge's default globalName.
const DefaultGlobal = "__DEV_TOOLBAR__"

// PageCaller evaluates a function in one tab (implemented by *cdp.Page).
type PageCaller interface {
	CallJS(ctx context.Context, fn string, awaitPromise bool, args ...any) (json.RawMessage, error)
}

// Tab identifies the tab a CDP read came from; it is echoed in connection.tab.
type Tab struct {
	ID    string `json:"id"`
	Alias string `json:"alias,omitempty"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// CDP reads the toolbar straight from the page's global, no relay involved.
type CDP struct {
	Page     PageCaller
	Tab      Tab
	Instance string // "" = the only instance
	Global   string // "" = __DEV_TOOLBAR__
}

type bridgeOptions struct {
	GlobalName string          `json:"globalName"`
	Instance   string          `json:"instance,omitempty"`
	Tab        Tab             `json:"tab"`
	ID         string          `json:"id,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	HasInput   bool            `json:"hasInput"`
}

func (t *CDP) State(ctx context.Context) (json.RawMessage, error) {
	return t.call(ctx, "state", bridgeOptions{})
}

func (t *CDP) Commands(ctx context.Context) (json.RawMessage, error) {
	return t.call(ctx, "commands", bridgeOptions{})
}

func (t *CDP) Run(ctx context.Context, id string, input json.RawMessage) (json.RawMessage, error) {
	doc, err := t.call(ctx, "run", bridgeOptions{ID: id, Input: input, HasInput: input != nil})
	if err != nil {
		return nil, err
	}
	var outcome struct {
		OK     bool   `json:"ok"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(doc, &outcome); err != nil {
		return nil, output.Errorf("no-outcome", "the page's answer to %q is not an outcome: %v", id, err)
	}
	if outcome.OK {
		return doc, nil
	}
	return nil, outcomeError(id, doc, outcome.Reason)
}

// outcomeError turns a page's {ok:false, reason, …} outcome into an error that keeps
// its details, exactly as the relay client does for the relay's answers.
func outcomeError(id string, doc json.RawMessage, reason string) error {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(doc, &fields)
	if reason == "" {
		reason = "no-outcome"
	}
	var msg string
	_ = json.Unmarshal(fields["error"], &msg)
	if msg == "" {
		msg = fmt.Sprintf("the page answered %q with %s", id, reason)
		switch reason {
		case "unknown-command":
			msg = fmt.Sprintf("the page has no command %q", id)
		case "torn-down":
			msg = "the toolbar unmounted; nothing ran"
		}
	}
	e := output.Errorf(reason, "%s", msg)
	for k, v := range fields {
		if k != "ok" && k != "reason" && k != "error" {
			e.With(k, v)
		}
	}
	return e
}

func (t *CDP) call(ctx context.Context, op string, o bridgeOptions) (json.RawMessage, error) {
	o.GlobalName = t.Global
	if o.GlobalName == "" {
		o.GlobalName = DefaultGlobal
	}
	o.Instance = t.Instance
	o.Tab = t.Tab
	raw, err := t.Page.CallJS(ctx, bridgeJS, true, op, o)
	if err != nil {
		return nil, err
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, output.Errorf("no-toolbar", "unexpected answer from the page: %s", raw)
	}
	var ans struct {
		Doc       json.RawMessage `json:"doc"`
		Failed    string          `json:"failed"`
		Detail    string          `json:"detail"`
		Error     string          `json:"error"`
		ErrorName string          `json:"errorName"`
		Instances []string        `json:"instances"`
		Protocol  any             `json:"protocolVersion"`
		URL       string          `json:"url"`
		Title     string          `json:"title"`
	}
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		return nil, output.Errorf("no-toolbar", "unexpected answer from the page: %v", err)
	}
	if ans.Failed == "" {
		return ans.Doc, nil
	}
	tab := t.Tab
	if tab.URL == "" {
		tab.URL, tab.Title = ans.URL, ans.Title
	}
	where := fmt.Sprintf("tab %s (%s)", firstNonEmpty(tab.Alias, tab.ID), tab.URL)
	switch ans.Failed {
	case "no-toolbar":
		e := output.Errorf("no-toolbar", "no dev toolbar agent bridge in %s: looked for globalThis.%s (protocolVersion 2 with instances); is agentBridge() in the toolbar's extensions and has the toolbar rendered?", where, o.GlobalName).With("global", o.GlobalName).With("tab", tab)
		if ans.Detail == "not-a-registry" {
			e.Message = fmt.Sprintf("globalThis.%s in %s is not a protocol-2 agent bridge registry (protocolVersion %v)", o.GlobalName, where, ans.Protocol)
		}
		return nil, e.With("detail", ans.Detail)
	case "ambiguous-instance":
		return nil, output.Errorf("ambiguous-instance", "%d toolbars are mounted in %s (%s); pick one with --instance", len(ans.Instances), where, strings.Join(ans.Instances, ", ")).With("instances", ans.Instances)
	case "no-such-instance":
		return nil, output.Errorf("no-such-instance", "no toolbar instance %q in %s (mounted: %s)", t.Instance, where, strings.Join(ans.Instances, ", ")).With("instances", ans.Instances)
	case "run-not-allowed":
		return nil, output.Errorf("run-not-allowed", "the toolbar in %s was built with allowRun: false, so it carries no runCommand; pass agentBridge({ allowRun: true }) to enable dtb run", where)
	case "torn-down":
		return nil, output.Errorf("torn-down", "the toolbar in %s unmounted while dtb read it; nothing ran", where)
	case "threw":
		e := output.Errorf("threw", "the bridge threw: %s", ans.Error)
		if ans.ErrorName != "" {
			e.With("errorName", ans.ErrorName)
		}
		return nil, e
	}
	return nil, output.Errorf(ans.Failed, "%s", firstNonEmpty(ans.Error, ans.Failed))
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
