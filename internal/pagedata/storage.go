package pagedata

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

//go:embed js/storage.js
var storageJS string

// StorageResult is what `dtb storage` prints. Values appear only here, on
// stdout; errors name keys, never values.
type StorageResult struct {
	Tab    cdp.TabRef        `json:"tab"`
	Area   string            `json:"area"` // local or session
	Origin string            `json:"origin"`
	Count  *int              `json:"count,omitempty"` // list: the entries; clear: the entries removed
	Items  map[string]string `json:"items,omitempty"`
	Key    string            `json:"key,omitempty"`
	Value  *string           `json:"value,omitempty"`
	// Removed: remove found the key and removed it.
	Removed *bool `json:"removed,omitempty"`
	Set     bool  `json:"set,omitempty"`
	Cleared bool  `json:"cleared,omitempty"`
}

// Storage runs op (list, get, set, remove, clear) on the tab's local or
// session storage.
func Storage(ctx context.Context, p *cdp.Page, area, op, key, value string) (*StorageResult, error) {
	if area != "local" && area != "session" {
		return nil, output.Usage("storage area must be local or session, not %q", area)
	}
	raw, err := p.CallJS(ctx, storageJS, false, area, op, key, value)
	if err != nil {
		return nil, err
	}
	var r struct {
		Unavailable string            `json:"unavailable"`
		Failed      string            `json:"failed"`
		Origin      string            `json:"origin"`
		Items       map[string]string `json:"items"`
		Found       bool              `json:"found"`
		Value       *string           `json:"value"`
		Count       int               `json:"count"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, output.Errorf("cdp-error", "bad storage answer: %v", err)
	}
	if r.Unavailable != "" {
		return nil, output.Errorf("storage-unavailable", "the document at origin %s may not use %sStorage (%s)", r.Origin, area, r.Unavailable).
			With("origin", r.Origin).With("area", area)
	}
	if r.Failed != "" {
		return nil, output.Errorf("storage-failed", "setting key %q in %sStorage failed: %s", key, area, r.Failed).
			With("origin", r.Origin).With("area", area).With("key", key)
	}
	res := &StorageResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, Area: area, Origin: r.Origin}
	switch op {
	case "list":
		n := len(r.Items)
		res.Items, res.Count = r.Items, &n
		if res.Items == nil {
			res.Items = map[string]string{}
		}
	case "get":
		if !r.Found {
			return nil, output.Errorf("no-such-key", "%sStorage of %s has no key %q", area, r.Origin, key).
				With("origin", r.Origin).With("area", area).With("key", key)
		}
		res.Key, res.Value = key, r.Value
	case "set":
		res.Key, res.Value, res.Set = key, r.Value, true
	case "remove":
		res.Key, res.Removed = key, &r.Found
	case "clear":
		res.Count, res.Cleared = &r.Count, true
	}
	return res, nil
}
