package read

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

var (
	//go:embed js/tracker.js
	trackerJS string
	//go:embed js/ready.js
	readyJS string
)

// Readiness defaults (the browser bridge's rules).
const (
	DefaultQuiet   = 800 * time.Millisecond
	DefaultTimeout = 8 * time.Second
	DefaultStretch = 30 * time.Second
	// DefaultProbe is how long a document without a tracker is watched before
	// the load evidence is trusted.
	DefaultProbe = 50 * time.Millisecond
	// pollEvery paces the loop while the page loads or a condition is unmet.
	pollEvery = 50 * time.Millisecond
)

// Conditions are the explicit things to wait for before reading; all that are
// set must hold at once.
type Conditions struct {
	CSS  string // a selector matching a rendered element
	Text string // text in the page's visible text (whitespace-normalised)
	URL  string // a fragment of the page's URL
}

// Any reports whether a condition is set.
func (c Conditions) Any() bool { return c.CSS != "" || c.Text != "" || c.URL != "" }

// ReadyOptions tune WaitReady. Zero values mean the defaults.
type ReadyOptions struct {
	Conditions
	Quiet   time.Duration // how long the DOM must stay unchanged (negative: not at all)
	Timeout time.Duration // the readiness window
	Stretch time.Duration // how far the window stretches while the page still loads
	Probe   time.Duration // how long an untracked document is watched
}

func (o ReadyOptions) withDefaults() ReadyOptions {
	switch {
	case o.Quiet == 0:
		o.Quiet = DefaultQuiet
	case o.Quiet < 0:
		o.Quiet = 0 // no quiet period: loaded and conditions met is enough
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Stretch <= 0 {
		o.Stretch = DefaultStretch
	}
	if o.Stretch < o.Timeout {
		o.Stretch = o.Timeout
	}
	if o.Probe <= 0 {
		o.Probe = DefaultProbe
	}
	return o
}

// Readiness says how the wait went.
type Readiness struct {
	// Ms is how long the wait took (0 on a page that settled long ago).
	Ms int64 `json:"ms"`
	// TimedOut is true when the window closed before the page was ready; the
	// content is then read as it is.
	TimedOut bool `json:"timedOut"`
	// Loaded: the document (and every same-origin frame) finished loading.
	Loaded bool `json:"loaded"`
	// QuietMs is how long the DOM had been unchanged when the wait ended, as far
	// as dtb knows.
	QuietMs int64 `json:"quietMs"`
	// Basis says how quiet was established: "history" (the tracker dtb left in
	// the page shows no change for long enough), "load" (no tracker yet: the
	// page loaded and fetched nothing for long enough and stayed unchanged
	// while watched briefly), "watched" (dtb watched the DOM go quiet) or ""
	// when it did not become quiet.
	Basis string `json:"basis"`
	// Conditions are the explicit wait conditions and whether each held.
	Conditions map[string]bool `json:"conditions,omitempty"`
	URL        string          `json:"-"`
}

// readyState is one observation by ready.js.
type readyState struct {
	BadSelector  string          `json:"badSelector"`
	Now          float64         `json:"now"`
	URL          string          `json:"url"`
	ReadyState   string          `json:"readyState"`
	Since        float64         `json:"since"`
	Last         float64         `json:"last"`
	Fresh        bool            `json:"fresh"`
	Early        bool            `json:"early"`
	LoadEnd      float64         `json:"loadEnd"`
	LastResource float64         `json:"lastResource"`
	Cond         map[string]bool `json:"cond"`
}

type readyArgs struct {
	CSS  string `json:"css,omitempty"`
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

// newDocumentTracker is the tracker as a script for every new document.
func newDocumentTracker() string {
	return "(" + strings.TrimSpace(trackerJS) + ")(true);"
}

// Track makes the tab's documents keep a "last DOM change" record: it adds the
// tracker as a new-document script (for every document the tab loads while
// this connection lasts, frames included) and installs it into the current
// document. A tracker, once in a document, stays there for good, so a later
// command knows at once whether the page is quiet. Commands that open or
// touch pages call it; it costs two round trips.
func Track(ctx context.Context, p *cdp.Page) error {
	errs := make(chan error, 2)
	go func() { errs <- AddTracker(ctx, p) }()
	go func() {
		_, err := p.Evaluate(ctx, "("+strings.TrimSpace(trackerJS)+")(false)", false)
		errs <- err
	}()
	return errors.Join(<-errs, <-errs)
}

// AddTracker adds the tracker as a new-document script only (before a
// navigation: the new document is then watched from its first node). New-document
// scripts run only while the Page domain is enabled on the connection.
// A connection the session host keeps has it from an earlier command
// (cdp.Page.OncePerConn): added again, it would run once more per document.
func AddTracker(ctx context.Context, p *cdp.Page) error {
	return p.OncePerConn("tracker", func() error {
		if _, err := proto.Call(ctx, p, page.Enable, page.EnableParams{}); err != nil {
			return err
		}
		_, err := proto.Call(ctx, p, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: newDocumentTracker()})
		return err
	})
}

func observe(ctx context.Context, p *cdp.Page, args readyArgs) (*readyState, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	// Both functions are embedded constants; the page-dependent part is JSON.
	expr := "(" + strings.TrimSpace(readyJS) + ")(" + strings.TrimSpace(trackerJS) + "," + string(a) + ")"
	raw, err := p.Evaluate(ctx, expr, false)
	if err != nil {
		return nil, err
	}
	st := &readyState{}
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, fmt.Errorf("readiness: %w", err)
	}
	return st, nil
}

// WaitReady waits until the page has loaded, every explicit condition holds
// and the DOM has been quiet for o.Quiet, inside a window of o.Timeout that
// stretches to o.Stretch while the page is still loading (and never past the
// context's deadline, less a margin left for reading).
//
// How long the DOM has been quiet comes from the tracker (see Track): a page
// dtb touched before answers at once. A document without a tracker gets one
// now; then, when it finished loading and fetched nothing for o.Quiet, it is
// watched for o.Probe only and taken as quiet since then; otherwise dtb
// watches it for the full quiet period.
//
// A window that closes with the explicit conditions met (or with none) is not
// an error: the Readiness says TimedOut. With a condition unmet it is a
// timeout error (exit 4). A bad --wait-css selector is a usage error.
func WaitReady(ctx context.Context, p *cdp.Page, o ReadyOptions) (*Readiness, error) {
	o = o.withDefaults()
	start := time.Now()
	soft, hard := start.Add(o.Timeout), start.Add(o.Stretch)
	if d, ok := ctx.Deadline(); ok {
		// Leave time to read the page after a timed-out wait.
		margin := min(2*time.Second, time.Until(d)/4)
		if end := d.Add(-margin); end.Before(hard) {
			hard = end
		}
		if hard.Before(soft) {
			soft = hard
		}
	}
	quiet := float64(o.Quiet.Milliseconds())
	args := readyArgs{CSS: o.CSS, Text: o.Text, URL: o.URL}
	rd := &Readiness{}
	evidence := false
	var probeUntil float64
	var st *readyState
	polls := 0
	for {
		s, err := observe(ctx, p, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, output.Wrap("timeout", ctx.Err(), "waiting for the page to be ready")
			}
			var pe *cdp.ProtocolError
			if !errors.As(err, &pe) {
				return nil, err
			}
			// A navigation replaced the document under the evaluation: look again.
			s = nil
		}
		if s != nil {
			polls++
			if s.BadSelector != "" {
				return nil, output.Usage("--wait-css %q is not a valid selector: %s", o.CSS, s.BadSelector)
			}
			st = s
			if polls == 1 && s.Fresh {
				evidence = true
				probeUntil = s.Now + float64(o.Probe.Milliseconds())
			}
		}
		sleep := pollEvery
		if st != nil {
			loaded := st.ReadyState == "complete"
			condOK := true
			for _, ok := range st.Cond {
				condOK = condOK && ok
			}
			ref := math.Max(st.Last, st.Since)
			watched := st.Now - ref
			quietFor := watched
			if evidence {
				quietFor = st.Now - math.Max(st.Last, math.Max(st.LoadEnd, st.LastResource))
			}
			rd.Loaded, rd.QuietMs, rd.URL = loaded, int64(math.Max(quietFor, 0)), st.URL
			rd.Conditions = nil
			if len(st.Cond) > 0 {
				rd.Conditions = st.Cond
			}
			if loaded && condOK {
				switch {
				case watched >= quiet:
					rd.Basis = "watched"
					if polls == 1 && !st.Fresh {
						rd.Basis = "history"
					}
				case evidence && quietFor >= quiet && st.Now >= probeUntil:
					rd.Basis = "load"
				}
				if rd.Basis != "" {
					rd.Ms = time.Since(start).Milliseconds()
					return rd, nil
				}
				wait := quiet - watched
				if evidence && quietFor >= quiet {
					wait = probeUntil - st.Now
				}
				sleep = time.Duration(math.Max(wait, 5)) * time.Millisecond
			}
		}
		now := time.Now()
		if now.After(soft) && (rd.Loaded || now.After(hard)) || now.After(hard) {
			rd.Ms = time.Since(start).Milliseconds()
			rd.TimedOut = true
			if o.Any() && !conditionsHeld(rd.Conditions) {
				return rd, timeoutError(o, rd)
			}
			return rd, nil
		}
		limit := soft
		if !rd.Loaded {
			limit = hard
		}
		if left := time.Until(limit); sleep > left {
			sleep = max(left, time.Millisecond)
		}
		select {
		case <-time.After(sleep):
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "waiting for the page to be ready")
		}
	}
}

func conditionsHeld(c map[string]bool) bool {
	if len(c) == 0 {
		return false
	}
	for _, ok := range c {
		if !ok {
			return false
		}
	}
	return true
}

func timeoutError(o ReadyOptions, rd *Readiness) *output.Error {
	var unmet []string
	for _, k := range []string{"css", "text", "url"} {
		if ok, asked := rd.Conditions[k]; asked && !ok {
			unmet = append(unmet, "--wait-"+k)
		}
	}
	if len(unmet) == 0 {
		unmet = []string{"the wait condition"}
	}
	e := output.Errorf("timeout", "%s did not hold within %s", strings.Join(unmet, " and "), time.Duration(rd.Ms)*time.Millisecond)
	e.With("conditions", rd.Conditions).With("url", rd.URL).With("loaded", rd.Loaded).With("waitedMs", rd.Ms)
	return e
}

// Warning is the text of the warning a timed-out readiness adds to a result.
func (r *Readiness) Warning() string {
	if r == nil || !r.TimedOut {
		return ""
	}
	what := "the DOM did not stay quiet"
	if !r.Loaded {
		what = "the page did not finish loading"
	}
	return fmt.Sprintf("readiness: %s within %s; read the page as it was", what, time.Duration(r.Ms)*time.Millisecond)
}
