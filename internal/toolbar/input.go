// Package toolbar is what `dtb state`, `dtb commands` and `dtb run` share whatever
// the transport: building a command's input from the command line and checking it
// against the command's declared input fields (spec §1.5).
package toolbar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dtb-cli/dtb/internal/output"
)

// Command is the part of an AgentCommandView that dtb reads.
type Command struct {
	ID          string       `json:"id"`
	Label       string       `json:"label"`
	Description string       `json:"description,omitempty"`
	Input       *InputSchema `json:"input,omitempty"`
}

// InputSchema is the toolbar's flat input description: not JSON Schema.
type InputSchema struct {
	Fields map[string]Field `json:"fields"`
}

// Field is one input field: a primitive type (or list of them) or an enum.
type Field struct {
	Type        json.RawMessage `json:"type"`
	Values      []any           `json:"values,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Description string          `json:"description,omitempty"`
	Default     any             `json:"default,omitempty"`
}

// Types returns the field's accepted type names ("boolean", "string", "number",
// or "enum").
func (f Field) Types() []string {
	var one string
	if json.Unmarshal(f.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(f.Type, &many)
	return many
}

// Input is a command's input as given on the command line, with, for each field set
// by key=value, the text typed (so a string field typed as value=9 stays "9").
type Input struct {
	Value json.RawMessage // nil: no input at all
	typed map[string]string
}

// ParseArgs builds an input from the arguments after the command id: one JSON
// document, or key=value pairs where value is JSON when it parses (value=9 is a
// number), key:=JSON forces JSON and key==text forces a string.
func ParseArgs(args []string) (Input, error) {
	if len(args) == 0 {
		return Input{}, nil
	}
	if len(args) == 1 && !looksLikePair(args[0]) {
		if !json.Valid([]byte(args[0])) {
			return Input{}, output.BadInput("input %q is neither JSON nor key=value pairs", args[0])
		}
		return Input{Value: json.RawMessage(args[0])}, nil
	}
	obj := map[string]json.RawMessage{}
	typed := map[string]string{}
	var order []string
	for _, a := range args {
		key, val, ok := strings.Cut(a, "=")
		if !ok || key == "" || key == ":" {
			return Input{}, output.BadInput("argument %q is not key=value (use key=value, key:=JSON or key==text, or one JSON document)", a)
		}
		var raw []byte
		switch {
		case strings.HasSuffix(key, ":"):
			key = strings.TrimSuffix(key, ":")
			if !json.Valid([]byte(val)) {
				return Input{}, output.BadInput("%s:= wants JSON, got %q", key, val).With("field", key)
			}
			raw = []byte(val)
		case strings.HasPrefix(val, "="):
			raw, _ = json.Marshal(val[1:])
		default:
			if json.Valid([]byte(val)) && strings.TrimSpace(val) != "" {
				raw = []byte(val)
			} else {
				raw, _ = json.Marshal(val)
			}
			typed[key] = val
		}
		if _, dup := obj[key]; dup {
			return Input{}, output.BadInput("field %q given twice", key).With("field", key)
		}
		obj[key] = raw
		order = append(order, key)
	}
	return Input{Value: encodeOrdered(obj, order), typed: typed}, nil
}

// FromJSON wraps a JSON document read from a file or stdin.
func FromJSON(data []byte, source string) (Input, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Input{}, nil
	}
	if !json.Valid(data) {
		return Input{}, output.BadInput("input from %s is not valid JSON", source)
	}
	return Input{Value: json.RawMessage(data)}, nil
}

func looksLikePair(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	switch t[0] {
	case '{', '[', '"':
		return false
	}
	k, _, ok := strings.Cut(t, "=")
	return ok && k != "" && !strings.ContainsAny(k, " {[\"")
}

func encodeOrdered(obj map[string]json.RawMessage, order []string) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(obj[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// FindCommand returns the command with id, or an unknown-command error listing
// what exists.
func FindCommand(cmds []Command, id string) (*Command, error) {
	for i := range cmds {
		if cmds[i].ID == id {
			return &cmds[i], nil
		}
	}
	ids := make([]string, len(cmds))
	for i, c := range cmds {
		ids[i] = c.ID
	}
	e := output.Errorf("unknown-command", "the page has no command %q (dtb commands lists %d)", id, len(cmds)).With("command", id)
	if near := Nearest(id, ids, 3); len(near) > 0 {
		e.Message += fmt.Sprintf("; did you mean %s?", quoteList(near))
		e.With("suggestion", near[0]).With("suggestions", near)
	}
	return nil, e
}

// Nearest returns up to max of ids that id was probably meant to be, best first:
// the same id in another case, ids it is a prefix or the last segments of
// ("set" for theme.set), then ids within a few typing mistakes (edit distance
// with transpositions: flags.sett, flag.set, falgs.set → flags.set).
func Nearest(id string, ids []string, max int) []string {
	lid := strings.ToLower(id)
	limit := min(1+len([]rune(lid))/5, 4)
	type cand struct {
		id    string
		score int
	}
	var cands []cand
	for _, c := range ids {
		lc := strings.ToLower(c)
		score := -1
		switch {
		case lc == lid:
			score = 0
		case lid != "" && (strings.HasPrefix(lc, lid) || strings.HasSuffix(lc, "."+lid)):
			score = 1
		default:
			if d := editDistance(lid, lc); d <= limit {
				score = 1 + d
			}
		}
		if score >= 0 {
			cands = append(cands, cand{c, score})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score < cands[j].score })
	var out []string
	for _, c := range cands {
		if len(out) == max || (c.score > 0 && cands[0].score == 0) {
			break // the same id in another case is the answer
		}
		out = append(out, c.id)
	}
	return out
}

// editDistance is the optimal string alignment distance: insertions, deletions,
// substitutions and swaps of two neighbours each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Check validates in against cmd's declared input fields and returns the input to
// send: fields typed as key=value whose field takes only strings are sent as the
// text typed. Every problem names the field.
func Check(cmd *Command, in Input) (json.RawMessage, error) {
	if in.Value == nil {
		if cmd.Input != nil {
			if req := requiredFields(cmd.Input); len(req) > 0 {
				return nil, output.BadInput("%s needs input: missing required field %q", cmd.ID, req[0]).With("field", req[0]).With("command", cmd.ID)
			}
		}
		return nil, nil
	}
	if cmd.Input == nil {
		return nil, output.BadInput("%s declares no input fields, but input was given (use --no-check to send it anyway)", cmd.ID).With("command", cmd.ID)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(in.Value, &obj); err != nil || obj == nil {
		return nil, output.BadInput("%s takes an object of fields (%s), not %s", cmd.ID, strings.Join(fieldNames(cmd.Input), ", "), in.Value).With("command", cmd.ID)
	}
	order := keyOrder(in.Value)
	for _, k := range order {
		f, ok := cmd.Input.Fields[k]
		if !ok {
			return nil, output.BadInput("%s has no input field %q (fields: %s)", cmd.ID, k, strings.Join(fieldNames(cmd.Input), ", ")).With("field", k).With("command", cmd.ID)
		}
		fixed, err := checkValue(cmd.ID, k, f, obj[k], in.typed)
		if err != nil {
			return nil, err
		}
		obj[k] = fixed
	}
	for _, k := range requiredFields(cmd.Input) {
		if _, ok := obj[k]; !ok {
			return nil, output.BadInput("%s: missing required field %q", cmd.ID, k).With("field", k).With("command", cmd.ID)
		}
	}
	return encodeOrdered(obj, order), nil
}

func checkValue(cmdID, name string, f Field, raw json.RawMessage, typed map[string]string) (json.RawMessage, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&v)
	types := f.Types()
	if len(types) == 1 && types[0] == "enum" {
		for _, allowed := range f.Values {
			if sameJSON(allowed, v) {
				return raw, nil
			}
		}
		// value=9 typed for an enum of strings: the text may be what was meant.
		if text, ok := typed[name]; ok {
			for _, allowed := range f.Values {
				if s, isStr := allowed.(string); isStr && s == text {
					b, _ := json.Marshal(text)
					return b, nil
				}
			}
		}
		return nil, output.BadInput("%s: field %q must be one of %s, got %s", cmdID, name, valuesList(f.Values), raw).With("field", name).With("command", cmdID)
	}
	got := jsonType(v)
	for _, t := range types {
		if t == got {
			return raw, nil
		}
	}
	text, wasTyped := typed[name]
	if wasTyped && len(types) == 1 && types[0] == "string" {
		b, _ := json.Marshal(text)
		return b, nil
	}
	hint := ""
	switch {
	case got == "null":
		// The schema has no way to say "null too" (a variant flag whose variants
		// include null): the check follows the schema, the hint must not turn null
		// into the string "null".
		hint = fmt.Sprintf("; the declared fields do not allow null: omit %s to leave it unset, or, if the command takes null anyway", name)
		if strings.Contains(strings.ToLower(f.Description), "null") {
			hint = fmt.Sprintf("; the declared fields do not allow null, but the field's description mentions it (%q): if the command takes null here", f.Description)
		}
		hint += ", send it unchecked with --no-check"
	case wasTyped && contains(types, "string"):
		hint = fmt.Sprintf(" (write %s==%s to send it as a string)", name, text)
	}
	gotText := got + " " + string(raw)
	if got == "null" {
		gotText = got
	}
	return nil, output.BadInput("%s: field %q must be %s, got %s%s", cmdID, name, strings.Join(types, " or "), gotText, hint).With("field", name).With("command", cmdID)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func sameJSON(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	if string(ab) == string(bb) {
		return true
	}
	// 9 and 9.0 are the same number.
	an, aok := a.(float64)
	bn, bok := b.(json.Number)
	if aok && bok {
		f, err := bn.Float64()
		return err == nil && f == an
	}
	return false
}

func valuesList(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func requiredFields(s *InputSchema) []string {
	var out []string
	for _, k := range fieldNames(s) {
		if s.Fields[k].Required {
			out = append(out, k)
		}
	}
	return out
}

func fieldNames(s *InputSchema) []string {
	names := make([]string, 0, len(s.Fields))
	for k := range s.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// keyOrder lists an object's keys in document order.
func keyOrder(obj json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}
