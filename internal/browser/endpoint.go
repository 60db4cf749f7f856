package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	proto "github.com/chromedp/cdproto/cdp"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// TargetInfo is one page target as the discovery API or Target.getTargets lists it.
type TargetInfo struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Title            string `json:"title"`
	URL              string `json:"url"`
	WebSocketURL     string `json:"webSocketDebuggerUrl,omitempty"`
	BrowserContextID string `json:"browserContextId,omitempty"`
}

type versionDoc struct {
	Browser     string `json:"Browser"`
	WebSocket   string `json:"webSocketDebuggerUrl"`
	UserAgent   string `json:"User-Agent"`
	ProtocolVer string `json:"Protocol-Version"`
}

var httpClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// StatusError is an HTTP answer of a discovery endpoint that is not 200.
type StatusError struct {
	Method, URL string
	Status      int
	Body        string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.Status, e.Body)
}

// Refused reports whether err is the endpoint refusing the credentials
// (HTTP 401 or 403, from discovery or a websocket handshake): the status, or 0.
func Refused(err error) int {
	var se *StatusError
	if errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden) {
		return se.Status
	}
	var he *cdp.HandshakeError
	if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
		return he.Status
	}
	return 0
}

// Unauthorized is the error of an endpoint that refused the credentials.
func Unauthorized(err error, endpoint string) error {
	st := Refused(err)
	return output.Wrap("unauthorized", err, fmt.Sprintf("the browser service at %s refused the credentials (HTTP %d); check --cdp-header or the token in --cdp", Redact(endpoint), st)).
		With("endpoint", Redact(endpoint)).With("status", st)
}

// Redact hides the values of a URL's query (a service's token) for messages.
func Redact(raw string) string { return cdp.RedactURL(raw) }

// WithQuery adds query (a service's token, as in ?token=…) to raw unless
// raw already has a query: every request to a service that takes its token
// in the URL carries it.
func WithQuery(raw, query string) string {
	if query == "" || strings.Contains(raw, "?") {
		return raw
	}
	return raw + "?" + query
}

// HTTPJSON sends method to base+path and decodes the JSON answer into out.
// A query on base (a service's ?token=…) goes with every request.
func HTTPJSON(ctx context.Context, method, base, path string, header http.Header, out any) error {
	base, query, _ := strings.Cut(base, "?")
	target := strings.TrimRight(base, "/") + path
	if query != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		target += sep + query
	}
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	client := httpClient
	if conf := tlsOf(ctx); conf != nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSClientConfig: conf}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &StatusError{Method: method, URL: Redact(target), Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: not a DevTools answer: %w", method, path, err)
	}
	return nil
}

// FetchVersion reads /json/version of a discovery endpoint.
func FetchVersion(ctx context.Context, base string, header http.Header) (*versionDoc, error) {
	var v versionDoc
	if err := HTTPJSON(ctx, http.MethodGet, base, "/json/version", header, &v); err != nil {
		return nil, err
	}
	if v.WebSocket == "" {
		return nil, fmt.Errorf("%s/json/version has no webSocketDebuggerUrl", base)
	}
	return &v, nil
}

// ListPagesHTTP lists the page targets through /json/list (other types, such as
// browser_ui, service_worker or iframe, are dropped).
func ListPagesHTTP(ctx context.Context, base string, header http.Header) ([]TargetInfo, error) {
	var all []TargetInfo
	if err := HTTPJSON(ctx, http.MethodGet, base, "/json/list", header, &all); err != nil {
		return nil, err
	}
	pages := all[:0]
	for _, t := range all {
		if t.Type == "page" {
			pages = append(pages, t)
		}
	}
	return pages, nil
}

// hostForChrome makes a host acceptable to Chrome's Host check (an IP address or
// localhost) by resolving a name.
func hostForChrome(ctx context.Context, hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if host == "localhost" || net.ParseIP(host) != nil {
		return hostport
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return hostport
	}
	return net.JoinHostPort(addrs[0].IP.String(), port)
}

// rewriteWSHost points a webSocketDebuggerUrl at the host the user reached the
// browser through (Chrome builds it from the Host header, a proxy may not).
func rewriteWSHost(wsURL, hostport string) string {
	u, err := url.Parse(wsURL)
	if err != nil {
		return wsURL
	}
	u.Host = hostport
	return u.String()
}

// Attempt is one endpoint dtb tried, for diagnostics.
type Attempt struct {
	Source   string `json:"source"` // session, cdp, auto-connect, launch
	Endpoint string `json:"endpoint"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
}

// ResolveCDP turns a --cdp value into the browser it names: a bare port
// (127.0.0.1), host:port, http(s)://host:port (through /json/version), or a
// ws:// / wss:// websocket URL used as is.
func ResolveCDP(ctx context.Context, raw string, header http.Header) (*BrowserInfo, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, output.Usage("--cdp wants a URL or a port")
	}
	if _, err := strconv.Atoi(raw); err == nil {
		raw = "http://127.0.0.1:" + raw
	} else if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, output.Usage("--cdp: cannot parse %q as a URL or port", raw)
	}
	info := &BrowserInfo{Attached: true, Source: "cdp:" + Redact(raw)}
	// A token in the URL's query is kept on every request: discovery, tab
	// listing, new and closed tabs, and every websocket.
	query := u.RawQuery
	switch u.Scheme {
	case "http", "https":
		host := u.Host
		if u.Scheme == "http" {
			host = hostForChrome(ctx, u.Host)
		}
		base := WithQuery(u.Scheme+"://"+host, query)
		v, err := FetchVersion(ctx, base, header)
		if err != nil {
			if Refused(err) != 0 {
				return nil, Unauthorized(err, raw)
			}
			return nil, output.Wrap("no-browser", err, "no DevTools endpoint at "+Redact(raw)).With("endpoint", Redact(raw))
		}
		info.Endpoint = base
		info.WebSocket = WithQuery(rewriteWSHost(v.WebSocket, host), query)
		if u.Scheme == "https" {
			info.WebSocket = strings.Replace(info.WebSocket, "ws://", "wss://", 1)
		}
		info.Version = v.Browser
	case "ws":
		host := hostForChrome(ctx, u.Host)
		base := WithQuery("http://"+host, query)
		v, err := FetchVersion(ctx, base, header)
		if err != nil && ctx.Err() != nil {
			// The host accepts and never answers: dialling its websocket
			// would wait a second --connect-timeout for nothing.
			return nil, output.Wrap("no-browser", err, "nothing answers at "+raw+" within --connect-timeout").With("endpoint", raw)
		}
		if err == nil {
			info.Endpoint = base
			info.Version = v.Browser
			if strings.Contains(u.Path, "/devtools/") {
				u.Host = host
				info.WebSocket = u.String()
			} else {
				info.WebSocket = WithQuery(rewriteWSHost(v.WebSocket, host), query)
			}
		} else if strings.Contains(u.Path, "/devtools/") {
			u.Host = host
			info.WebSocket = u.String()
		} else {
			return nil, output.Wrap("no-browser", err, "no DevTools endpoint at "+raw).With("endpoint", raw)
		}
	case "wss":
		info.WebSocket = raw // remote services: browser websocket only, headers for auth
	default:
		return nil, output.Usage("--cdp: unsupported scheme %q (use http, https, ws, wss or a port)", u.Scheme)
	}
	return info, nil
}

// ProfileDirs are the default Chrome/Chromium profile directories searched by
// --auto-connect for a DevToolsActivePort file.
func ProfileDirs() []string {
	home, _ := os.UserHomeDir()
	if home == "" {
		return nil
	}
	if runtime.GOOS == "darwin" {
		base := filepath.Join(home, "Library", "Application Support")
		return []string{
			filepath.Join(base, "Google", "Chrome"),
			filepath.Join(base, "Google", "Chrome Beta"),
			filepath.Join(base, "Google", "Chrome Dev"),
			filepath.Join(base, "Google", "Chrome Canary"),
			filepath.Join(base, "Chromium"),
			filepath.Join(base, "BraveSoftware", "Brave-Browser"),
			filepath.Join(base, "Microsoft Edge"),
		}
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(home, ".config")
	}
	return []string{
		filepath.Join(cfg, "google-chrome"),
		filepath.Join(cfg, "google-chrome-beta"),
		filepath.Join(cfg, "google-chrome-unstable"),
		filepath.Join(cfg, "chromium"),
		filepath.Join(cfg, "BraveSoftware", "Brave-Browser"),
		filepath.Join(cfg, "microsoft-edge"),
	}
}

// readActivePort reads <profile>/DevToolsActivePort: the port on the first line,
// the browser websocket path on the second.
func readActivePort(profile string) (port int, path string, err error) {
	b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
	if err != nil {
		return 0, "", err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	port, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || port <= 0 {
		return 0, "", fmt.Errorf("bad DevToolsActivePort in %s", profile)
	}
	if len(lines) > 1 {
		path = strings.TrimSpace(lines[1])
	}
	return port, path, nil
}

// AutoConnect finds a running Chrome of the user's through the DevToolsActivePort
// file of its default profile directories. When the browser answers only on its
// websocket (Chrome's "allow remote debugging" mode shows a prompt per
// connection), it waits up to timeout for the user to allow it.
func AutoConnect(ctx context.Context, timeout time.Duration) (*BrowserInfo, []Attempt, error) {
	var tried []Attempt
	for _, dir := range ProfileDirs() {
		port, path, err := readActivePort(dir)
		if err != nil {
			continue
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		v, herr := FetchVersion(hctx, base, nil)
		cancel()
		if herr == nil {
			tried = append(tried, Attempt{Source: "auto-connect", Endpoint: base, OK: true})
			return &BrowserInfo{Attached: true, Source: "auto-connect", Endpoint: base, WebSocket: rewriteWSHost(v.WebSocket, fmt.Sprintf("127.0.0.1:%d", port)), Version: v.Browser, ProfileDir: dir}, tried, nil
		}
		if path == "" {
			tried = append(tried, Attempt{Source: "auto-connect", Endpoint: base, Error: herr.Error()})
			continue
		}
		ws := fmt.Sprintf("ws://127.0.0.1:%d%s", port, path)
		wctx, cancel := context.WithTimeout(ctx, timeout)
		c, werr := cdp.Dial(wctx, ws, nil)
		if werr == nil {
			var ver cdpbrowser.GetVersionResult
			ver, werr = proto.Call(wctx, c.Target(""), cdpbrowser.GetVersion, proto.Empty{})
			c.Close()
			if werr == nil {
				cancel()
				tried = append(tried, Attempt{Source: "auto-connect", Endpoint: ws, OK: true})
				return &BrowserInfo{Attached: true, Source: "auto-connect", WebSocket: ws, Version: ver.Product, ProfileDir: dir}, tried, nil
			}
		}
		cancel()
		tried = append(tried, Attempt{Source: "auto-connect", Endpoint: ws, Error: werr.Error()})
	}
	if len(tried) == 0 {
		return nil, tried, output.Errorf("no-browser", "--auto-connect found no running Chrome with remote debugging enabled (no DevToolsActivePort in its profile directories); enable it in chrome://inspect/#remote-debugging").With("searched", ProfileDirs())
	}
	return nil, tried, output.Errorf("no-browser", "--auto-connect could not connect to a running Chrome").With("tried", tried)
}

// CleartextRemote reports whether the --cdp value raw names a plain http://
// or ws:// endpoint (a bare host:port is http) on a host that is not loopback:
// the CDP traffic and any --cdp-header (an Authorization, say) travel in clear.
func CleartextRemote(ctx context.Context, raw string) bool {
	raw = strings.TrimSpace(raw)
	if IsDigits(raw) {
		return false // a bare port is 127.0.0.1
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "ws") || u.Hostname() == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return !ip.IsLoopback()
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return true
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return true
		}
	}
	return false
}

// IsDigits reports whether s is a non-empty run of ASCII digits (a bare port, an alias number).
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func PathOf(u string) string {
	if i := strings.Index(u, "/devtools/"); i >= 0 {
		return u[i:]
	}
	return u
}

// Answers reports whether b's endpoint answers as the same
func Answers(ctx context.Context, b *BrowserInfo) bool {
	if b.Endpoint == "" {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := FetchVersion(cctx, b.Endpoint, nil)
	return err == nil && PathOf(v.WebSocket) == PathOf(b.WebSocket)
}

// FirstPages lists a just-launched browser's pages, waiting up to half a second
// for its first tab.
func FirstPages(ctx context.Context, endpoint string) ([]TargetInfo, error) {
	for i := 0; ; i++ {
		pages, err := ListPagesHTTP(ctx, endpoint, nil)
		if err != nil || len(pages) > 0 || i >= 100 {
			return pages, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
