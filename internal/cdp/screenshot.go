package cdp

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg" // DecodeConfig of captures
	_ "image/png"
	"math"
	"strconv"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"

	"github.com/dtb-cli/dtb/internal/output"
)

// DefaultMaxSide is the longest side a capture may have before it is scaled down.
const DefaultMaxSide = 8000

// Clip is a rectangle in CSS pixels, in document coordinates.
type Clip struct {
	X, Y, Width, Height float64
}

// ParseClip parses "x,y,w,h".
func ParseClip(s string) (*Clip, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, output.Usage("--clip wants x,y,w,h, got %q", s)
	}
	var v [4]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, output.Usage("--clip wants numbers x,y,w,h, got %q", s)
		}
		v[i] = f
	}
	if v[2] <= 0 || v[3] <= 0 || v[0] < 0 || v[1] < 0 {
		return nil, output.Usage("--clip wants a positive width and height and non-negative x,y, got %q", s)
	}
	return &Clip{X: v[0], Y: v[1], Width: v[2], Height: v[3]}, nil
}

// ScreenshotOptions configure Page.Screenshot. The zero value captures the
// viewport as JPEG quality 70.
type ScreenshotOptions struct {
	Format  string // "jpeg" (default) or "png"
	Quality int    // JPEG quality, 1–100; 0 means 70
	Full    bool   // the whole page beyond the viewport
	Clip    *Clip  // a region (document coordinates, CSS px); excludes Full
	MaxSide int    // scale the capture down so that no side exceeds it; 0 means 8000
}

// Screenshot is a capture.
type Screenshot struct {
	Data   []byte  `json:"-"`
	Format string  `json:"format"`
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Scaled bool    `json:"scaled"`
	Scale  float64 `json:"scale"`
	Mode   string  `json:"mode"` // viewport, full or clip
}

// getLayoutMetrics is page.GetLayoutMetrics with the device-pixel visual
// viewport its answer still carries (deprecated, so cdproto leaves it out):
// its width over the CSS one is the device pixel ratio of a capture.
var getLayoutMetrics = proto.Command[proto.Empty, layoutMetrics]{Method: page.GetLayoutMetrics.Method}

type layoutMetrics struct {
	page.GetLayoutMetricsResult
	VisualViewport *page.VisualViewport `json:"visualViewport"`
}

// cssViewport is the visual viewport in CSS pixels (zero when not told).
func (lm *layoutMetrics) cssViewport() page.VisualViewport {
	if lm.CSSVisualViewport == nil {
		return page.VisualViewport{}
	}
	return *lm.CSSVisualViewport
}

// Screenshot captures the tab: the viewport, the full page or a clip. A full
// page the browser cannot capture is "full-page-screenshot-unavailable", never
// a silent viewport image.
func (p *Page) Screenshot(ctx context.Context, o ScreenshotOptions) (*Screenshot, error) {
	format := strings.ToLower(o.Format)
	switch format {
	case "", "jpg", "jpeg":
		format = "jpeg"
	case "png":
	default:
		return nil, output.Usage("--format must be jpeg or png, not %q", o.Format)
	}
	quality := o.Quality
	if quality == 0 {
		quality = 70
	}
	if quality < 1 || quality > 100 {
		return nil, output.Usage("--quality must be 1–100, not %d", quality)
	}
	maxSide := o.MaxSide
	if maxSide <= 0 {
		maxSide = DefaultMaxSide
	}
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormat(format)}
	if format == "jpeg" {
		params.Quality = new(int64(quality))
	}
	shot := &Screenshot{Format: format, Scale: 1, Mode: "viewport"}
	var want *[2]int
	if o.Full || o.Clip != nil {
		lm, err := proto.Call(ctx, p, getLayoutMetrics, proto.Empty{})
		if err != nil {
			return nil, wrapCDP(ctx, err, "reading the page size")
		}
		dpr := 1.0
		if css := lm.cssViewport(); css.ClientWidth > 0 && lm.VisualViewport != nil && lm.VisualViewport.ClientWidth > 0 {
			dpr = lm.VisualViewport.ClientWidth / css.ClientWidth
		}
		clip := o.Clip
		if o.Full {
			shot.Mode = "full"
			var size dom.Rect
			if lm.CSSContentSize != nil {
				size = *lm.CSSContentSize
			}
			w, h := math.Ceil(size.Width), math.Ceil(size.Height)
			if w <= 0 || h <= 0 {
				return nil, output.Errorf("full-page-screenshot-unavailable", "the page reports no content size; a full-page capture is impossible")
			}
			clip = &Clip{Width: w, Height: h}
		} else {
			shot.Mode = "clip"
		}
		scale := 1.0
		if longest := math.Max(clip.Width, clip.Height) * dpr; longest > float64(maxSide) {
			scale = float64(maxSide) / longest
			shot.Scaled = true
		}
		shot.Scale = scale
		params.Clip = &page.Viewport{X: clip.X, Y: clip.Y, Width: clip.Width, Height: clip.Height, Scale: scale}
		params.CaptureBeyondViewport = new(true)
		want = &[2]int{int(math.Round(clip.Width * dpr * scale)), int(math.Round(clip.Height * dpr * scale))}
	}
	res, err := p.capture(ctx, params)
	if err != nil {
		if o.Full && ctx.Err() == nil && !isReason(err, "page-navigating") {
			return nil, output.Wrap("full-page-screenshot-unavailable", err, "the browser refused a full-page capture")
		}
		return nil, wrapCDP(ctx, err, "capturing the screenshot")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(res.Data))
	if err != nil {
		if o.Full {
			return nil, output.Wrap("full-page-screenshot-unavailable", err, "the browser returned no usable full-page image")
		}
		return nil, output.Wrap("cdp-error", err, "the browser returned no usable image")
	}
	if o.Full && want != nil && (abs(cfg.Width-want[0]) > 2 || abs(cfg.Height-want[1]) > 2) {
		return nil, output.Errorf("full-page-screenshot-unavailable", "the browser captured %dx%d instead of the full page (%dx%d)", cfg.Width, cfg.Height, want[0], want[1]).
			With("width", cfg.Width).With("height", cfg.Height).With("expectedWidth", want[0]).With("expectedHeight", want[1])
	}
	if o.Clip == nil && !o.Full && max(cfg.Width, cfg.Height) > maxSide {
		// A viewport larger than max-side: capture it again, scaled.
		if lm, err := proto.Call(ctx, p, getLayoutMetrics, proto.Empty{}); err == nil && lm.cssViewport().ClientWidth > 0 {
			vp := lm.cssViewport()
			scale := float64(maxSide) / float64(max(cfg.Width, cfg.Height))
			params.Clip = &page.Viewport{X: vp.PageX, Y: vp.PageY, Width: vp.ClientWidth, Height: vp.ClientHeight, Scale: scale}
			if res2, err := p.capture(ctx, params); err == nil {
				res = res2
				if c2, _, err := image.DecodeConfig(bytes.NewReader(res.Data)); err == nil {
					cfg = c2
					shot.Scaled, shot.Scale = true, scale
				}
			}
		}
	}
	shot.Data = res.Data
	shot.Width, shot.Height = cfg.Width, cfg.Height
	return shot, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// captureRetries is how many navigations a capture outlives before it
// gives up: a page that never stops navigating is said so, fast.
const captureRetries = 10

// capture runs Page.captureScreenshot, again when a navigation of the tab
// replaces the document under it: the browser then answers "Not attached to
// an active page", or never. A capture that has not answered some time after
// a navigation committed is abandoned and taken again of the new document.
func (p *Page) capture(ctx context.Context, params page.CaptureScreenshotParams) (page.CaptureScreenshotResult, error) {
	navs, stop := On(p, page.FrameNavigated)
	defer stop()
	Post(ctx, p, page.Enable, page.EnableParams{})
	type answer struct {
		res page.CaptureScreenshotResult
		err error
	}
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithCancel(ctx)
		answers := make(chan answer, 1)
		go func() {
			res, err := proto.Call(actx, p, page.CaptureScreenshot, params)
			answers <- answer{res, err}
		}()
		var res page.CaptureScreenshotResult
		var err error
		var grace <-chan time.Time
	wait:
		for {
			select {
			case a := <-answers:
				res, err = a.res, a.err
				break wait
			case ev, ok := <-navs:
				if ok && grace == nil && topFrameEvent(ev) {
					grace = time.After(captureGrace)
				}
			case <-grace:
				cancel()
				<-answers
				err = errRecapture
				break wait
			}
		}
		cancel()
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil || (err != errRecapture && !detachedCapture(err)) {
			return res, err
		}
		if attempt+1 >= captureRetries {
			return res, output.Errorf("page-navigating", "the page navigated %d times while it was captured; it never holds still long enough for a screenshot", attempt+1).With("navigations", attempt+1)
		}
	}
}

// captureGrace is how long a capture may still answer once a navigation has
// replaced its document.
const captureGrace = 250 * time.Millisecond

var errRecapture = errors.New("the document changed during the capture")

// detachedCapture: the capture's document went away under it.
func detachedCapture(err error) bool {
	var pe *ProtocolError
	return asProtocol(err, &pe) && (strings.Contains(pe.Message, "Not attached to an active page") || strings.Contains(pe.Message, "Inspected target navigated"))
}

// topFrameEvent: a Page.frameNavigated of the tab's main frame.
func topFrameEvent(ev Event) bool {
	e, ok := Decode(page.FrameNavigated, ev)
	return ok && (e.Frame == nil || e.Frame.ParentID == "")
}

func isReason(err error, reason string) bool {
	oe, ok := err.(*output.Error)
	return ok && oe.Reason == reason
}
