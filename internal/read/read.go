// Package read is the browser side of `dtb extract` and `dtb search`: it waits
// until a tab is ready to read (load, DOM quiet, explicit conditions), reads
// the rendered, visible DOM in one page-side pass (open shadow roots and frames
// included) and hands it to internal/extract. The page-side code lives in js/
// and gets its arguments as JSON only.
package read

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/extract"
	"github.com/dtb-cli/dtb/internal/output"
)

// Options configure Read.
type Options struct {
	Ready ReadyOptions
	// Include picks the fields to compute (extract.Fields names); nil means all.
	Include map[string]bool
	// MaxChars truncates long fields, with a marker and a warning; 0: no limit.
	MaxChars int
	// SkipReady reads at once, without waiting.
	SkipReady bool
}

// Result is what `dtb extract` prints: extract's fields plus the readiness,
// the tab and timings.
type Result struct {
	*extract.Result
	// Frames replaces extract's list: the same entries plus the browser's frame
	// id and the frame's name.
	Frames    []Frame     `json:"frames,omitempty"`
	Readiness *Readiness  `json:"readiness"`
	Tab       *cdp.TabRef `json:"tab,omitempty"`
	// Status is the HTTP status of the document, when the command opened it.
	Status *int   `json:"status,omitempty"`
	Timing Timing `json:"timing"`
}

// MarshalJSON writes extract's fields (which have their own rules for empty
// ones) followed by the reading's own.
func (r *Result) MarshalJSON() ([]byte, error) {
	inner := []byte("{}")
	if r.Result != nil {
		b, err := r.Result.MarshalJSON()
		if err != nil {
			return nil, err
		}
		inner = b
	}
	own, err := json.Marshal(struct {
		Frames    []Frame     `json:"frames,omitempty"`
		Readiness *Readiness  `json:"readiness"`
		Tab       *cdp.TabRef `json:"tab,omitempty"`
		Status    *int        `json:"status,omitempty"`
		Timing    Timing      `json:"timing"`
	}{r.Frames, r.Readiness, r.Tab, r.Status, r.Timing})
	if err != nil {
		return nil, err
	}
	if len(inner) <= 2 {
		return own, nil
	}
	return append(append(inner[:len(inner)-1:len(inner)-1], ','), own[1:]...), nil
}

// Timing of a read, in milliseconds.
type Timing struct {
	ReadyMs   int64 `json:"readyMs"`   // the readiness wait
	PageMs    int64 `json:"pageMs"`    // the page-side pass
	ReadMs    int64 `json:"readMs"`    // reading the page, frames included
	ExtractMs int64 `json:"extractMs"` // text, reader, Markdown … in dtb
	TotalMs   int64 `json:"totalMs"`
}

// Read waits for the tab to be ready (unless o.SkipReady), reads it and
// extracts the requested fields. A readiness timeout without an explicit
// condition is a warning in the result (and warn, when not nil, is called
// with it); with an unmet condition it is a timeout error.
func Read(ctx context.Context, p *cdp.Page, o Options, warn func(reason, message string, details map[string]any)) (*Result, error) {
	start := time.Now()
	if err := checkInclude(o.Include); err != nil {
		return nil, err
	}
	res := &Result{Readiness: &Readiness{Basis: "skipped"}}
	var warnings []string
	if !o.SkipReady {
		// The new-document tracker matters when the page navigates while dtb
		// waits; the immediate install happens in the first observation.
		trackErr := make(chan error, 1)
		go func() { trackErr <- AddTracker(ctx, p) }()
		rd, err := WaitReady(ctx, p, o.Ready)
		<-trackErr
		if err != nil {
			return nil, err
		}
		res.Readiness = rd
		if w := rd.Warning(); w != "" {
			warnings = append(warnings, w)
			if warn != nil {
				warn("not-ready", w, map[string]any{"readiness": rd})
			}
		}
	}
	res.Timing.ReadyMs = time.Since(start).Milliseconds()
	readStart := time.Now()
	snap, err := Take(ctx, p, SnapOptions{})
	if err != nil {
		return nil, wrapCDP(ctx, err, "reading the page")
	}
	if snap.Hidden != "" {
		warnings = append(warnings, "the page is hidden as a whole ("+snap.Hidden+"; an anti-flicker style never removed?): read as if shown")
	}
	res.Timing.PageMs = snap.PageMs
	res.Timing.ReadMs = time.Since(readStart).Milliseconds()
	exStart := time.Now()
	// Frames are listed here (with the browser's ids), not by extract.
	inc := map[string]bool{}
	for _, f := range extract.Fields {
		if f != extract.FieldFrames && (o.Include == nil || o.Include[f]) {
			inc[f] = true
		}
	}
	er, err := extract.Extract(snap.Input(), extract.Options{Include: inc, MaxChars: o.MaxChars})
	if err != nil {
		return nil, output.Usage("%v", err)
	}
	res.Timing.ExtractMs = time.Since(exStart).Milliseconds()
	er.Warnings = append(append([]string{}, warnings...), er.Warnings...)
	if warn != nil {
		for _, w := range er.Warnings {
			if strings.Contains(w, "truncated to") {
				warn("truncated", w, nil)
			}
		}
	}
	if o.Include == nil || o.Include[extract.FieldFrames] {
		res.Frames = snap.Frames
		if res.Frames == nil {
			res.Frames = []Frame{}
		}
	}
	er.Frames = nil
	res.Result = er
	res.Timing.TotalMs = time.Since(start).Milliseconds()
	return res, nil
}

// alwaysThere are the result keys printed whatever --include says; naming them
// in --include is accepted.
var alwaysThere = map[string]bool{"title": true, "url": true, "warnings": true, "readiness": true, "tab": true, "timing": true, "status": true}

func checkInclude(include map[string]bool) error {
	for k := range include {
		known := alwaysThere[k]
		for _, f := range extract.Fields {
			known = known || f == k
		}
		if !known {
			return output.Usage("--include: unknown field %q (known: %s)", k, strings.Join(extract.Fields, ", ")).With("fields", extract.Fields)
		}
	}
	return nil
}

// ParseInclude parses a comma-separated --include value ("" means all).
func ParseInclude(s string) (map[string]bool, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return nil, nil
	}
	m := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		m[f] = true
	}
	if err := checkInclude(m); err != nil {
		return nil, err
	}
	return m, nil
}

// wrapCDP maps a failed CDP step to a dtb error.
func wrapCDP(ctx context.Context, err error, what string) error {
	var oe *output.Error
	if errors.As(err, &oe) {
		return err
	}
	if ctx.Err() != nil {
		return output.Wrap("timeout", ctx.Err(), what)
	}
	return output.Wrap("cdp-error", err, what)
}
