package interact

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/output"
)

// WaitOptions are the conditions of Wait; all that are set must hold at once.
type WaitOptions struct {
	Load  bool          // document.readyState is "complete"
	Loc   *Locator      // an element matches (visible)
	Gone  bool          // with Loc: nothing matches any more
	URL   string        // the URL contains it, or matches it as a glob (* and ?)
	Quiet time.Duration // the DOM stayed unchanged that long
	JS    string        // the expression is truthy (main world, promises awaited)
}

// WaitResult says what held and when.
type WaitResult struct {
	Held    []string `json:"held"`
	Ms      int64    `json:"ms"`
	URL     string   `json:"url"`
	Matches *int     `json:"matches,omitempty"`
	Value   any      `json:"value,omitempty"`
}

// observed is what the last poll saw, reported on timeout.
type observed struct {
	URL        string `json:"url,omitempty"`
	ReadyState string `json:"readyState,omitempty"`
	Matches    *int   `json:"matches,omitempty"`
	Hidden     int    `json:"hidden,omitempty"`
	JS         any    `json:"js,omitempty"`
	JSError    string `json:"jsError,omitempty"`
	Quiet      *bool  `json:"quiet,omitempty"`
}

// Conditions lists the conditions set, as the flags name them.
func (o WaitOptions) Conditions() []string {
	var c []string
	if o.Load {
		c = append(c, "load")
	}
	if o.Loc != nil {
		if o.Gone {
			c = append(c, "gone "+o.Loc.String())
		} else {
			c = append(c, o.Loc.String())
		}
	}
	if o.URL != "" {
		c = append(c, "url "+o.URL)
	}
	if o.JS != "" {
		c = append(c, "js")
	}
	if o.Quiet > 0 {
		c = append(c, "quiet "+o.Quiet.String())
	}
	return c
}

// URLMatches: a pattern with * or ? is a glob over the whole URL (* matches
// any run of characters, / included); otherwise a substring.
func URLMatches(url, pattern string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return strings.Contains(url, pattern)
	}
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(url)
}

// Wait polls until every condition holds, or fails timeout (exit 4) at ctx's
// deadline with what it last observed.
func (p *Page) Wait(ctx context.Context, o WaitOptions) (*WaitResult, error) {
	conds := o.Conditions()
	if len(conds) == 0 {
		return nil, output.Usage("wait wants a condition: --load, --css, --text, --role, --label, --placeholder, --url, --gone, --quiet MS or --js EXPR")
	}
	if o.Gone && o.Loc == nil {
		return nil, output.Usage("--gone goes with a locator (--css, --text, --role …)")
	}
	if o.Loc != nil {
		if err := o.Loc.Validate(); err != nil {
			return nil, err
		}
		if o.Loc.Ref != "" || o.Loc.X != nil {
			return nil, output.Usage("wait locates with --css, --text, --role, --label or --placeholder")
		}
	}
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	var obs observed
	for attempt := 0; ; attempt++ {
		ok, res, err := p.waitOnce(ctx, o, &obs, deadline, hasDeadline)
		if err != nil && !isGone(err) {
			return nil, err
		}
		if err != nil {
			p.top = nil
			ok = false
		}
		if ok {
			res.Held = conds
			res.Ms = time.Since(start).Milliseconds()
			return res, nil
		}
		wait := pollEvery(attempt)
		if !hasDeadline || time.Until(deadline) < margin+wait || !sleep(ctx, wait) {
			if ctx.Err() == context.Canceled { // Ctrl-C, not the deadline
				return nil, output.Wrap("interrupted", ctx.Err(), "interrupted while waiting for "+strings.Join(conds, " and "))
			}
			return nil, output.Errorf("timeout", "waited %s for %s", time.Since(start).Round(time.Millisecond), strings.Join(conds, " and ")).
				With("conditions", conds).With("observed", obs)
		}
	}
}

func (p *Page) waitOnce(ctx context.Context, o WaitOptions, obs *observed, deadline time.Time, hasDeadline bool) (bool, *WaitResult, error) {
	res := &WaitResult{}
	top, err := p.topFrame(ctx)
	if err != nil {
		return false, nil, err
	}
	var info struct {
		URL        string `json:"url"`
		ReadyState string `json:"readyState"`
	}
	if err := p.callValue(ctx, top, "", map[string]any{"op": "info"}, &info); err != nil {
		return false, nil, err
	}
	obs.URL, obs.ReadyState = info.URL, info.ReadyState
	res.URL = info.URL
	ok := true
	if o.Load && info.ReadyState != "complete" {
		ok = false
	}
	if o.URL != "" && !URLMatches(info.URL, o.URL) {
		ok = false
	}
	if o.Loc != nil {
		root, err := p.rootFor(ctx, *o.Loc)
		if err != nil {
			if isReason(err, "no-match") { // --frame not there yet
				n := 0
				obs.Matches = &n
				return false, nil, nil
			}
			return false, nil, err
		}
		fd, err := p.search(ctx, root, *o.Loc, needVisible, nil, 0)
		if err != nil {
			return false, nil, err
		}
		n := len(fd.matches)
		obs.Matches, obs.Hidden = &n, fd.hidden
		res.Matches = &n
		if o.Gone == (n > 0) {
			ok = false
		}
	}
	if o.JS != "" && ok {
		v, jerr := p.evalJS(ctx, o.JS)
		obs.JS, obs.JSError = v, ""
		if jerr != nil {
			if oe, isOut := jerr.(*output.Error); isOut && oe.Reason == "threw" {
				obs.JSError = oe.Message
				ok = false
			} else {
				return false, nil, jerr
			}
		} else if !truthy(v) {
			ok = false
		} else {
			res.Value = v
		}
	}
	if o.Quiet > 0 && ok {
		left := time.Duration(1<<62 - 1)
		if hasDeadline {
			left = time.Until(deadline) - margin
		}
		if left < o.Quiet {
			q := false
			obs.Quiet = &q
			return false, nil, nil
		}
		var q quietRes
		if err := p.callValue(ctx, top, "", map[string]any{"op": "quiet", "ms": o.Quiet.Milliseconds(), "cap": (left).Milliseconds()}, &q); err != nil {
			return false, nil, err
		}
		obs.Quiet = &q.Quiet
		if !q.Quiet {
			ok = false
		}
	}
	return ok, res, nil
}

// evalJS evaluates a user expression in the page's main world.
func (p *Page) evalJS(ctx context.Context, expr string) (any, error) {
	r, err := proto.Call(ctx, p.tab, evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true)})
	if err != nil {
		return nil, wrapCDP(ctx, err)
	}
	if d := r.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		first, _, _ := strings.Cut(msg, "\n")
		return nil, output.Errorf("threw", "%s", first)
	}
	var v any
	if len(r.Result.Value) > 0 {
		json.Unmarshal(r.Result.Value, &v)
	} else if r.Result.Type == "object" || r.Result.Type == "function" {
		return true, nil // a non-null object is truthy even when not serialisable
	}
	return v, nil
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	}
	return true
}
