package read

import (
	"context"
	"errors"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/extract"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

// SearchResult is what `dtb search` prints.
type SearchResult struct {
	Query     string           `json:"query"`
	Engine    string           `json:"engine"`
	URL       string           `json:"url"` // the results page, as loaded
	Title     string           `json:"title"`
	Hits      []extract.Hit    `json:"hits"`
	Count     int              `json:"count"`
	Tab       cdp.TabRef       `json:"tab"`
	Workspace string           `json:"workspace,omitempty"`
	Incognito bool             `json:"incognito"`
	Status    *int             `json:"status,omitempty"`
	Warnings  []string         `json:"warnings"`
	Readiness *Readiness       `json:"readiness"`
	Timing    map[string]int64 `json:"timing"`
}

// SearchOptions configure Search.
type SearchOptions struct {
	Query  string
	Engine string // the engine's name, as reported
	Parser string // the results-page parser ("" to detect it from the page)
	Limit  int    // at most this many hits (0: all)
	Open   session.OpenOptions
	Ready  ReadyOptions
}

// Search opens the results page as o.Open says, waits until it is ready, and
// parses its hits. A page the parser cannot read is unsupported-results-page.
func Search(ctx context.Context, sess *session.Session, o SearchOptions, warn func(reason, message string, details map[string]any)) (*SearchResult, error) {
	res, html, err := searchPage(ctx, sess, o, warn)
	if err != nil {
		return nil, err
	}
	res.Query, res.Engine = o.Query, o.Engine
	hits, perr := extract.ParseResults(o.Parser, html, res.URL)
	if perr != nil {
		return nil, resultsError(perr, res)
	}
	if o.Limit > 0 && len(hits) > o.Limit {
		hits = hits[:o.Limit]
	}
	res.Hits, res.Count = hits, len(hits)
	return res, nil
}

// searchPage opens the results page, waits for it and takes its HTML.
func searchPage(ctx context.Context, sess *session.Session, o SearchOptions, warn func(reason, message string, details map[string]any)) (*SearchResult, string, error) {
	start := time.Now()
	opened, err := sess.OpenURL(ctx, o.Open)
	if err != nil {
		return nil, "", err
	}
	p, err := sess.Page(ctx, session.TabSelector{Tab: opened.Tab.ID})
	if err != nil {
		return nil, "", err
	}
	defer p.Close()
	res := &SearchResult{
		Tab: opened.Tab, Workspace: opened.Workspace, Incognito: opened.Incognito, Status: opened.Status,
		Warnings: []string{}, Timing: map[string]int64{"openMs": time.Since(start).Milliseconds()},
	}
	readyStart := time.Now()
	rd, err := WaitReady(ctx, p, o.Ready)
	if err != nil {
		return nil, "", err
	}
	res.Readiness = rd
	res.Timing["readyMs"] = time.Since(readyStart).Milliseconds()
	if w := rd.Warning(); w != "" {
		res.Warnings = append(res.Warnings, w)
		warn("not-ready", w, nil)
	}
	snap, err := Take(ctx, p, SnapOptions{KeepStyle: true, KeepAriaHidden: true, NoFrames: true})
	if err != nil {
		return nil, "", err
	}
	res.URL, res.Title = snap.URL, snap.Title
	res.Timing["totalMs"] = time.Since(start).Milliseconds()
	return res, snap.HTML, nil
}

// resultsError maps a results-page parser failure to unsupported-results-page
// (exit 1) with what was found.
func resultsError(err error, res *SearchResult) error {
	e := output.Wrap("unsupported-results-page", err, "").With("url", res.URL).With("title", res.Title).With("tab", res.Tab.ID)
	var up *extract.UnsupportedPageError
	switch {
	case errors.As(err, &up):
		e.With("engine", up.Engine).With("found", up.Reason)
	case errors.Is(err, extract.ErrUnknownEngine):
		e.Message += "; name its parser with --parser (" + extract.EngineNames() + ")"
		e.With("engine", res.Engine)
	}
	if res.Status != nil {
		e.With("status", *res.Status)
	}
	return e
}
