package output

import "bytes"

// colorize copies already-formatted JSON into buf, colouring keys, strings, numbers
// and literals. It relies on the input being valid JSON, which encode guarantees.
func colorize(buf *bytes.Buffer, js []byte, c palette) {
	i := 0
	for i < len(js) {
		ch := js[i]
		switch {
		case ch == '"':
			end := stringEnd(js, i)
			s := js[i:end]
			if isKey(js, end) {
				buf.WriteString(c.key.Sprint(string(s)))
			} else {
				buf.WriteString(c.str.Sprint(string(s)))
			}
			i = end
		case ch == '-' || (ch >= '0' && ch <= '9'):
			j := i + 1
			for j < len(js) && bytes.IndexByte([]byte("0123456789.eE+-"), js[j]) >= 0 {
				j++
			}
			buf.WriteString(c.num.Sprint(string(js[i:j])))
			i = j
		case ch == 't' || ch == 'f' || ch == 'n':
			j := i
			for j < len(js) && js[j] >= 'a' && js[j] <= 'z' {
				j++
			}
			buf.WriteString(c.lit.Sprint(string(js[i:j])))
			i = j
		default:
			buf.WriteByte(ch)
			i++
		}
	}
}

// stringEnd returns the index just past the string literal starting at i.
func stringEnd(js []byte, i int) int {
	j := i + 1
	for j < len(js) {
		switch js[j] {
		case '\\':
			j += 2
			continue
		case '"':
			return j + 1
		}
		j++
	}
	return len(js)
}

// isKey reports whether the string ending at end is an object key.
func isKey(js []byte, end int) bool {
	for k := end; k < len(js); k++ {
		switch js[k] {
		case ' ', '\n', '\t', '\r':
			continue
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}
