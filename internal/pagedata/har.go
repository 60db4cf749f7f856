package pagedata

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"time"
)

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) of a network
// list: one entry per request, in order. What the records do not know is
// said the HAR way: -1 for sizes, "" for texts; a request whose method the
// records lack (resource timing of fetch/XHR) is "GET" with _methodUnknown.
// Secret header values stay redacted, as dtb network prints them.

type harLog struct {
	Log harBody `json:"log"`
}

type harBody struct {
	Version string     `json:"version"`
	Creator harCreator `json:"creator"`
	Pages   []any      `json:"pages"`
	Entries []harEntry `json:"entries"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type harEntry struct {
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"`
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         harTimings  `json:"timings"`
	ID              string      `json:"_id,omitempty"`
	Source          string      `json:"_source"`
	Type            string      `json:"_resourceType,omitempty"`
	Failure         string      `json:"_failure,omitempty"`
	MethodUnknown   bool        `json:"_methodUnknown,omitempty"`
	Routed          string      `json:"_routed,omitempty"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harRequest struct {
	Method      string  `json:"method"`
	URL         string  `json:"url"`
	HTTPVersion string  `json:"httpVersion"`
	Headers     []harNV `json:"headers"`
	QueryString []harNV `json:"queryString"`
	Cookies     []harNV `json:"cookies"`
	HeadersSize int     `json:"headersSize"`
	BodySize    int     `json:"bodySize"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Headers     []harNV    `json:"headers"`
	Cookies     []harNV    `json:"cookies"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
}

type harContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
}

type harTimings struct {
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// HARFile is where --har wrote the list, and how many entries it holds.
type HARFile struct {
	Path    string `json:"path"`
	Entries int    `json:"entries"`
}

// HAR is the HAR 1.2 document of reqs; version names dtb's build.
func HAR(reqs []Request, version string) ([]byte, error) {
	doc := harLog{Log: harBody{Version: "1.2", Creator: harCreator{Name: "dtb", Version: version}, Pages: []any{}, Entries: []harEntry{}}}
	for _, r := range reqs {
		e := harEntry{StartedDateTime: r.Time, Time: r.DurationMs, ID: r.ID, Source: r.Source, Type: r.Type, Failure: r.Failure, Routed: r.Routed}
		if e.StartedDateTime == "" {
			e.StartedDateTime = time.Time{}.Format(time.RFC3339)
		}
		method := "GET"
		if r.Method != nil && *r.Method != "" {
			method = *r.Method
		} else {
			e.MethodUnknown = true
		}
		proto := harProtocol(r.Protocol)
		e.Request = harRequest{Method: method, URL: r.URL, HTTPVersion: proto, Headers: harHeaders(r.RequestHeaders), QueryString: harQuery(r.URL), Cookies: []harNV{}, HeadersSize: -1, BodySize: -1}
		size, body := -1, -1
		if r.Size != nil {
			size, body = *r.Size, *r.Size
		}
		status := 0 // HAR's "no response" (a failed or pending request)
		if r.Status != nil {
			status = *r.Status
		}
		redirect := ""
		if loc, ok := headerValue(r.ResponseHeaders, "Location"); ok {
			redirect = loc
		}
		e.Response = harResponse{Status: status, HTTPVersion: proto, Headers: harHeaders(r.ResponseHeaders), Cookies: []harNV{},
			Content: harContent{Size: size, MimeType: r.MimeType}, RedirectURL: redirect, HeadersSize: -1, BodySize: body}
		e.Timings = harTimings{Send: 0, Wait: r.DurationMs, Receive: 0}
		doc.Log.Entries = append(doc.Log.Entries, e)
	}
	return json.MarshalIndent(doc, "", "  ")
}

func harProtocol(p string) string {
	switch strings.ToLower(p) {
	case "":
		return ""
	case "h2":
		return "HTTP/2.0"
	case "h3":
		return "HTTP/3.0"
	case "http/1.1":
		return "HTTP/1.1"
	}
	return p
}

// harHeaders are h in name order (a header object has none).
func harHeaders(h map[string]string) []harNV {
	out := []harNV{}
	for k, v := range h {
		out = append(out, harNV{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func harQuery(raw string) []harNV {
	out := []harNV{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	q := u.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range q[k] {
			out = append(out, harNV{k, v})
		}
	}
	return out
}

func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}
