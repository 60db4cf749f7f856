package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The relay's bodies must be byte-for-byte what the upstream JavaScript relay sends:
// JSON.stringify(body, null, 2) + "\n", with the page's key order kept. Go maps sort
// keys and encoding/json escapes differently from JSON.stringify, so bodies are built
// from a small value tree with JavaScript object semantics and written by render.
//
// A value is one of: nil (null), bool, string, number (canonical JavaScript text),
// int, int64, []any, object.

// number is a parsed JSON number, already in the text JSON.stringify would give it.
type number string

type member struct {
	key string
	val any
}

// object is an ordered JSON object with JavaScript property order: array-index keys
// first in ascending order, then the others in insertion order.
type object []member

func (o object) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// set has the semantics of a JavaScript property assignment: an existing key keeps
// its position and takes the new value, which is also why {...snapshot, connection}
// cannot move a snapshot's own "connection" key to the end.
func (o *object) set(key string, val any) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].val = val
			return
		}
	}
	o.insert(key, val)
}

// insert adds a key known to be absent, at its JavaScript position.
func (o *object) insert(key string, val any) {
	idx, isIndex := arrayIndex(key)
	if !isIndex {
		*o = append(*o, member{key, val})
		return
	}
	at := 0
	for at < len(*o) {
		j, ok := arrayIndex((*o)[at].key)
		if !ok || j > idx {
			break
		}
		at++
	}
	*o = append(*o, member{})
	copy((*o)[at+1:], (*o)[at:])
	(*o)[at] = member{key, val}
}

// clone copies the member list so a stored snapshot is never modified by a response.
func (o object) clone() object { return append(object(nil), o...) }

// arrayIndex reports whether key is a canonical array index (0 … 2^32−2), the keys
// JavaScript orders before all others.
func arrayIndex(key string) (uint64, bool) {
	if key == "" || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n <= math.MaxUint32-1
}

// maxDepth bounds nesting so a 4 MiB "[[[[…" body is refused instead of recursing.
const maxDepth = 10000

var errEndOfInput = errors.New("Unexpected end of JSON input")

// parseJSON parses one JSON text the way JSON.parse does (duplicate keys: the last
// value wins at the first key's position; numbers normalised as JavaScript prints
// them). The error text is Go's, not V8's; clients compare reasons, not messages.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return v, nil
	case err == nil:
		return nil, errors.New("Unexpected non-whitespace character after JSON")
	default:
		return nil, err
	}
}

func parseValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, errEndOfInput
	}
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, errors.New("JSON nests deeper than 10000 levels")
		}
		if t == '[' {
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, eofAsEnd(err)
		}
		return parseObject(dec, depth)
	case json.Number:
		return jsNumber(string(t)), nil
	default: // string, bool, nil
		return t, nil
	}
}

func parseObject(dec *json.Decoder, depth int) (any, error) {
	obj := object{}
	var pos map[string]int // only built for large objects, to keep parsing linear
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, eofAsEnd(err)
		}
		key, _ := tok.(string)
		v, err := parseValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		if pos == nil && len(obj) >= 16 {
			pos = make(map[string]int, 32)
			for i, m := range obj {
				pos[m.key] = i
			}
		}
		if pos != nil {
			if i, dup := pos[key]; dup {
				obj[i].val = v
				continue
			}
			if _, isIndex := arrayIndex(key); isIndex {
				// Rare (a large object with numeric keys): fall back to the ordered insert.
				obj.insert(key, v)
				pos = nil
				continue
			}
			pos[key] = len(obj)
			obj = append(obj, member{key, v})
			continue
		}
		obj.set(key, v)
	}
	_, err := dec.Token()
	return obj, eofAsEnd(err)
}

func eofAsEnd(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errEndOfInput
	}
	return err
}

// jsNumber turns a JSON number literal into the text JSON.stringify(JSON.parse(s))
// produces; a literal beyond float64 range parses as Infinity, which stringifies as
// null.
func jsNumber(s string) any {
	if plainInt(s) {
		return number(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && math.IsInf(f, 0) {
		return nil
	}
	return number(formatFloat(f))
}

// plainInt: an integer literal short enough to be exact is already canonical.
func plainInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 15 || d == "0" && s != "0" {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// formatFloat is ECMAScript Number::toString for finite values.
func formatFloat(f float64) string {
	if f == 0 {
		return "0" // -0 prints as 0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // shortest round-trip digits: d.ddde±x
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	es := "+"
	if n-1 < 0 {
		es = "-"
	}
	ex := strconv.Itoa(abs(n - 1))
	if k == 1 {
		return sign + digits + "e" + es + ex
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + es + ex
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// render is JSON.stringify(v, null, 2) + "\n".
func render(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case string:
		writeString(b, t)
	case number:
		b.WriteString(string(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, depth+1)
			writeValue(b, e, depth+1)
		}
		newline(b, depth)
		b.WriteByte(']')
	case object:
		if len(t) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(b, depth+1)
			writeString(b, m.key)
			b.WriteString(": ")
			writeValue(b, m.val, depth+1)
		}
		newline(b, depth)
		b.WriteByte('}')
	default:
		// Only the types above are ever built; failing loudly beats a silent "null".
		panic(fmt.Sprintf("relay: cannot render %T", v))
	}
}

func newline(b *bytes.Buffer, depth int) {
	b.WriteByte('\n')
	for i := 0; i < depth; i++ {
		b.WriteString("  ")
	}
}

const hexDigits = "0123456789abcdef"

// writeString quotes like JSON.stringify: only ", \, and control characters are
// escaped; everything else, U+2028 included, is written as is. Invalid UTF-8 (which
// can only come from raw request bytes) becomes U+FFFD so the body stays valid.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b.WriteString(`\"`)
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}
