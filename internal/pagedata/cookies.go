package pagedata

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// Cookie is one cookie as the browser holds it. Its value appears only on
// stdout: error messages name cookies, never their values.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  *string `json:"expires"` // RFC 3339, UTC; null for a session cookie
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite,omitempty"` // Strict, Lax, None; empty when the browser decides
	Size     int     `json:"size"`
}

// CookiesResult is what `dtb cookies` prints.
type CookiesResult struct {
	Tab     cdp.TabRef `json:"tab"`
	URLs    []string   `json:"urls"` // the URLs whose cookies these are
	Count   int        `json:"count"`
	Cookies []Cookie   `json:"cookies"`
	Set     bool       `json:"set,omitempty"`
	Cleared int        `json:"cleared,omitempty"`
}

func cookieOf(c *network.Cookie) Cookie {
	out := Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite), Size: int(c.Size)}
	if !c.Session && c.Expires > 0 {
		s := time.Unix(int64(c.Expires), 0).UTC().Format(time.RFC3339)
		out.Expires = &s
	}
	return out
}

// cookieURLs are the URLs whose cookies a command works on: urls when given
// (each must be http or https), else the tab's URL.
func cookieURLs(ctx context.Context, p *cdp.Page, urls []string) ([]string, error) {
	if len(urls) == 0 {
		raw, err := p.Evaluate(ctx, "location.href", false)
		if err != nil {
			return nil, err
		}
		var u string
		json.Unmarshal(raw, &u)
		urls = []string{u}
	}
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, output.Usage("cookies belong to http(s) URLs; %q is not one (open a page first, or give --url)", u).With("url", u)
		}
	}
	return urls, nil
}

// Cookies lists the cookies the browser would send to urls (default: the
// tab's URL), only those named name when it is set.
func Cookies(ctx context.Context, p *cdp.Page, urls []string, name string) (*CookiesResult, error) {
	urls, found, err := namedCookies(ctx, p, urls, name)
	if err != nil {
		return nil, err
	}
	res := &CookiesResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, URLs: urls, Cookies: []Cookie{}}
	for _, c := range found {
		res.Cookies = append(res.Cookies, cookieOf(c))
	}
	res.Count = len(res.Cookies)
	return res, nil
}

func getCookies(ctx context.Context, p *cdp.Page, urls []string) ([]*network.Cookie, error) {
	r, err := proto.Call(ctx, p, network.GetCookies, network.GetCookiesParams{URLs: urls})
	if err != nil {
		return nil, cdp.WrapCDP(ctx, err, "reading cookies")
	}
	return r.Cookies, nil
}

// setCookie is network.SetCookie with the success flag its answer still
// carries (deprecated, so cdproto leaves it out): a browser that answers
// false refused the cookie without a protocol error.
var setCookie = proto.Command[network.SetCookieParams, struct {
	Success *bool `json:"success"`
}]{Method: network.SetCookie.Method}

// CookieSpec is a cookie to set.
type CookieSpec struct {
	Name, Value  string
	URL          string // the cookie's URL (default: the tab's)
	Domain, Path string
	Expires      string // a duration from now (1h), RFC 3339 or Unix seconds; "" for a session cookie
	HTTPOnly     bool
	Secure       bool
	SameSite     string // Strict, Lax or None
}

// ParseExpires turns --expires into Unix seconds.
func ParseExpires(s string, now time.Time) (float64, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return 0, output.Usage("--expires %s is not in the future (use 'cookies clear' to remove a cookie)", s)
		}
		return float64(now.Add(d).Unix()), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return float64(t.Unix()), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
		return f, nil
	}
	return 0, output.Usage("--expires wants a duration (24h), an RFC 3339 time or Unix seconds, not %q", s)
}

// ParseSameSite validates --same-site.
func ParseSameSite(s string) (string, error) {
	for _, v := range []string{"Strict", "Lax", "None"} {
		if strings.EqualFold(s, v) {
			return v, nil
		}
	}
	return "", output.Usage("--same-site must be Strict, Lax or None, not %q", s)
}

// SetCookie sets a cookie and reads it back. The browser's refusal is
// cookie-rejected, naming the cookie, never its value.
func SetCookie(ctx context.Context, p *cdp.Page, spec CookieSpec) (*CookiesResult, error) {
	if spec.Name == "" {
		return nil, output.Usage("a cookie needs a name")
	}
	var urls []string
	if spec.URL != "" {
		urls = []string{spec.URL}
	}
	urls, err := cookieURLs(ctx, p, urls)
	if err != nil {
		return nil, err
	}
	params := network.SetCookieParams{Name: spec.Name, Value: spec.Value, URL: urls[0], Domain: spec.Domain, Path: spec.Path,
		HTTPOnly: new(spec.HTTPOnly), Secure: new(spec.Secure), SameSite: network.CookieSameSite(spec.SameSite)}
	if spec.Expires != "" {
		exp, err := ParseExpires(spec.Expires, time.Now())
		if err != nil {
			return nil, err
		}
		params.Expires = proto.TimeSinceEpoch(exp)
	}
	rejected := func(why string) error {
		return output.Errorf("cookie-rejected", "the browser refused cookie %q for %s: %s", spec.Name, urls[0], why).With("name", spec.Name).With("url", urls[0])
	}
	r, err := proto.Call(ctx, p, setCookie, params)
	if err != nil {
		var pe *cdp.ProtocolError
		if errors.As(err, &pe) {
			// The browser's message names fields, not values.
			return nil, rejected(pe.Message)
		}
		return nil, cdp.WrapCDP(ctx, err, "setting cookie "+strconv.Quote(spec.Name))
	}
	if r.Success != nil && !*r.Success {
		return nil, rejected("invalid for this URL (domain, path, secure or SameSite=None without secure)")
	}
	// Read it back where the browser keeps it.
	readURL := urls[0]
	if spec.Domain != "" || spec.Path != "" {
		u, _ := url.Parse(urls[0])
		if spec.Domain != "" {
			u.Host = strings.TrimPrefix(spec.Domain, ".")
		}
		if spec.Path != "" {
			u.Path = spec.Path
		}
		readURL = u.String()
	}
	all, err := getCookies(ctx, p, []string{readURL})
	if err != nil {
		return nil, err
	}
	res := &CookiesResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, URLs: []string{readURL}, Cookies: []Cookie{}, Set: true}
	for _, c := range all {
		if c.Name == spec.Name {
			res.Cookies = append(res.Cookies, cookieOf(c))
		}
	}
	if len(res.Cookies) == 0 {
		return nil, rejected("it is not stored afterwards (expired, or not visible to " + readURL + ")")
	}
	res.Count = len(res.Cookies)
	return res, nil
}

// ClearCookies deletes the cookies the browser would send to urls (default:
// the tab's URL), only those named name when it is set.
func ClearCookies(ctx context.Context, p *cdp.Page, urls []string, name string) (*CookiesResult, error) {
	urls, found, err := namedCookies(ctx, p, urls, name)
	if err != nil {
		return nil, err
	}
	res := &CookiesResult{Tab: cdp.TabRef{ID: p.ID, Alias: p.Alias}, URLs: urls, Cookies: []Cookie{}}
	for _, c := range found {
		if _, err := proto.Call(ctx, p, network.DeleteCookies, network.DeleteCookiesParams{Name: c.Name, Domain: c.Domain, Path: c.Path}); err != nil {
			return nil, cdp.WrapCDP(ctx, err, "deleting cookie "+strconv.Quote(c.Name))
		}
		res.Cleared++
	}
	return res, nil
}

// namedCookies resolves urls (default: the tab's URL) and lists the cookies
// the browser would send to them, only those named name when it is set; a
// name that matches none is no-such-cookie.
func namedCookies(ctx context.Context, p *cdp.Page, urls []string, name string) ([]string, []*network.Cookie, error) {
	urls, err := cookieURLs(ctx, p, urls)
	if err != nil {
		return nil, nil, err
	}
	all, err := getCookies(ctx, p, urls)
	if err != nil {
		return nil, nil, err
	}
	var found []*network.Cookie
	for _, c := range all {
		if name == "" || c.Name == name {
			found = append(found, c)
		}
	}
	if name != "" && len(found) == 0 {
		return nil, nil, output.Errorf("no-such-cookie", "no cookie named %q for %s", name, strings.Join(urls, ", ")).With("name", name).With("urls", urls)
	}
	return urls, found, nil
}
