package relay

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chunks is an io.Reader the client cannot size, so the body goes out chunked.
type chunks struct {
	n, size int
}

func (c *chunks) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, io.EOF
	}
	m := min(len(p), c.size)
	for i := range p[:m] {
		p[i] = ' '
	}
	c.size -= m
	if c.size == 0 {
		c.n, c.size = c.n-1, 1<<20
	}
	return m, nil
}

// Spec §4.10 case 16 and §8.3: over the cap the client reads the JSON 400 (not a
// reset), for a sized body, a chunked one, on both POST routes.
func TestOverCapBodyIsAnsweredNotReset(t *testing.T) {
	rt := newRelay(t, Options{})
	rt.checkIn(body("tab-a", true, ""))
	big := bytes.Repeat([]byte(" "), 5<<20)
	for _, c := range []struct {
		name, path string
		body       func() io.Reader
	}{
		{"sized state", "/__dev-toolbar/state", func() io.Reader { return bytes.NewReader(big) }},
		{"chunked state", "/__dev-toolbar/state", func() io.Reader { return &chunks{n: 5, size: 1 << 20} }},
		{"sized command", "/__dev-toolbar/commands/x", func() io.Reader { return bytes.NewReader(big) }},
		{"chunked command", "/__dev-toolbar/commands/x", func() io.Reader { return &chunks{n: 5, size: 1 << 20} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", rt.url+c.path, c.body())
			res, err := client.Do(req)
			if err != nil {
				t.Fatalf("client saw %v instead of the answer", err)
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != 400 || !strings.Contains(string(b), `"reason": "bad-body"`) ||
				!strings.Contains(string(b), `"message": "body exceeds 4194304 bytes"`) {
				t.Fatalf("%d %q %v", res.StatusCode, b, err)
			}
		})
	}
	rt.waitQueued(0) // nothing was queued

	// Over a raw socket: the whole answer, then a clean end of stream.
	addr := strings.TrimPrefix(rt.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		fmt.Fprintf(conn, "POST /__dev-toolbar/state HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, len(big))
		_, _ = conn.Write(big)
	}()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	all, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("raw socket: %v after %q", err, all)
	}
	if !bytes.HasPrefix(all, []byte("HTTP/1.1 400 ")) || !bytes.Contains(all, []byte("Connection: close")) ||
		!bytes.HasSuffix(all, []byte("\"message\": \"body exceeds 4194304 bytes\"\n}\n")) {
		t.Fatalf("raw socket got %q", all)
	}

	// A client that asks before sending (Expect: 100-continue) is refused without
	// sending the body at all.
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprintf(conn2, "POST /__dev-toolbar/state HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", addr, len(big))
	_ = conn2.SetReadDeadline(time.Now().Add(2 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn2), nil)
	if err != nil || res.StatusCode != 400 {
		t.Fatalf("expect-continue: %v %v", res, err)
	}
}

func TestBodyAtTheCapIsAccepted(t *testing.T) {
	rt := newRelay(t, Options{})
	prefix, suffix := `{"instanceId":"p","snapshot":{"pad":"`, `"},"results":[]}`
	b := prefix + strings.Repeat("x", maxBody-len(prefix)-len(suffix)) + suffix
	if len(b) != maxBody {
		t.Fatal(len(b))
	}
	if r := rt.checkIn(b); r.status != 200 {
		t.Fatalf("%d %.200s", r.status, r.raw)
	}
	// One byte over: refused, for a command's input and for a check-in whose
	// snapshot makes it too big (only a too-big result is read anyway: issue 10.4,
	// TestOversizedResultKeepsThePage).
	if r := rt.do("POST", "/__dev-toolbar/commands/x", b+" "); r.status != 400 {
		t.Fatalf("one byte over: %d", r.status)
	}
	if r := rt.checkIn(b + " "); r.status != 400 {
		t.Fatalf("one byte over: %d", r.status)
	}
}

func TestRepairRequestLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n", "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"POST /a/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n",
			"POST /a/%E0%A4%25A HTTP/1.1\r\n" + rawTargetHeader + ": s3cret /a/%E0%A4%A\r\nHost: x\r\n\r\n"},
		{"POST /a/%zz?q=% HTTP/1.1\nHost: x\n\n",
			"POST /a/%25zz?q=%25 HTTP/1.1\r\n" + rawTargetHeader + ": s3cret /a/%zz?q=%\r\nHost: x\n\n"},
		{"POST /a/%zz", "POST /a/%zz"},                                             // no full line yet
		{"GET http://x/%zz HTTP/1.1\r\n\r\n", "GET http://x/%zz HTTP/1.1\r\n\r\n"}, // not origin-form
		{"GET /a\x01%zz HTTP/1.1\r\n\r\n", "GET /a\x01%zz HTTP/1.1\r\n\r\n"},       // still refused after repair
	} {
		if got := string(repairRequestLine([]byte(c.in), "s3cret")); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// A client cannot pass its own raw target: the header must carry the secret.
func TestRawTargetHeaderCannotBeForged(t *testing.T) {
	rt := newRelay(t, Options{})
	r := rt.do("GET", "/__dev-toolbar/nope", "", rawTargetHeader, "guess /__dev-toolbar/state")
	expectReason(t, r, 404, "unknown-route")
	r = rt.do("GET", "/__dev-toolbar/nope", "", rawTargetHeader, rt.s.secret+" /__dev-toolbar/state")
	expectReason(t, r, 503, "no-page-connected")
}

// Issue 10.4: an over-cap check-in keeps what fits (its members, the small
// results, escapes and all) and replaces only the outcomes that do not fit.
func TestReadOverCap(t *testing.T) {
	big := `{"ok":true,"result":"` + strings.Repeat("y", maxBody) + `"}`
	in := `{"protocolVersion":2,"reporterId":"a\"b","allowRun":true,"snapshot":{"n":[1,2.5e3,null,false]},` +
		`"results":[{"token":"t1","outcome":{"ok":true,"result":"sm\"all"}},{"token":"t2","outcome":` + big + `},7]}  `
	all := func(string) bool { return true }
	body, apart, err := readOverCap(strings.NewReader(in), all)
	if err != nil || apart != 2 {
		t.Fatalf("%v, %d read apart", err, apart)
	}
	got := string(render(body))
	for _, want := range []string{`"reporterId": "a\"b"`, `2500`, `"result": "sm\"all"`, `"reason": "result-too-large"`, fmt.Sprintf(`"bytes": %d`, len(big)), "  7\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in %.600s", want, got)
		}
	}
	for _, bad := range []string{`{"a":1`, `{"a":1}x`, `[1]`, strings.Repeat(" ", 10)} {
		if _, _, err := readOverCap(strings.NewReader(bad), all); err == nil {
			t.Errorf("%q read", bad)
		}
	}

	// Issue 22.3: results that each fit are all kept, however many ride one
	// check-in (the page re-sends its outbox after a failed check-in); a result
	// for no waiting command (one delivered before, re-sent) is left out unread,
	// and a repeated token is kept once.
	fits := `{"ok":true,"result":"` + strings.Repeat("z", 3<<20) + `"}`
	in = `{"reporterId":"r","results":[{"token":"old","outcome":` + fits + `},{"token":"t1","outcome":` + fits +
		`},{"token":"t2","outcome":` + fits + `},{"token":"t1","outcome":` + fits + `}]}`
	body, apart, err = readOverCap(strings.NewReader(in), func(tok string) bool { return tok != "old" })
	if err != nil || apart != 4 {
		t.Fatalf("%v, %d read apart", err, apart)
	}
	rv, _ := body.get("results")
	results, _ := rv.([]any)
	if len(results) != 2 {
		t.Fatalf("%d results kept", len(results))
	}
	for i, e := range results {
		tok, _ := e.(object).get("token")
		out, _ := e.(object).get("outcome")
		if tok != fmt.Sprintf("t%d", i+1) || len(render(out)) < 3<<20 {
			t.Errorf("result %d: %v, %d bytes", i, tok, len(render(out)))
		}
	}
}
