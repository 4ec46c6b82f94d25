package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/dsd-project/dsd/model"
)

// decode is the oracle: encoding/json with numbers kept as literals.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.Trim(b[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// FuzzJSONBatchFlatten: FlattenJSON accepts exactly the valid UTF-8 JSON documents (and
// refuses "[]" on append); a top-level array yields its elements and anything else one
// message, each compact (json.Compact keeps key order and number literals) and equal in
// meaning to the input; the canonical bytes hold one "\n" per message, and rendering
// them as a read's array and flattening that again gives the same messages
// (B-9.1-02, B-9.1-03, B-9.1-04, A-21, D3).
func FuzzJSONBatchFlatten(f *testing.F) {
	for _, s := range []string{`{"e":1}`, `[{"a":1},{"b":2}]`, `[[1,2],[3,4]]`, `[[[1,2,3]]]`, `[]`,
		` [ 1 , "x" , null ] `, `"s"`, `1e400`, `{"a":1,"a":2}`, `[1,`, "\"\xff\"", `"\u2028"`,
		"[\n1\n]", `{"k":"v\nw"}`, `0.10`, `-0`, ``, ` `, `[{}]`, `{"x":[]}`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, allowEmpty bool) {
		msgs, err := model.FlattenJSON(body, allowEmpty)
		valid := utf8.Valid(body) && json.Valid(body)
		whole, derr := decode(body)
		if json.Valid(body) != (derr == nil) {
			t.Fatalf("json.Valid %t but the decoder says %v", json.Valid(body), derr)
		}
		arr, isArray := whole.([]any)
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		isArray = isArray && len(trimmed) > 0 && trimmed[0] == '['
		switch {
		case !valid:
			if !errors.Is(err, model.ErrInvalidJSON) {
				t.Fatalf("invalid JSON %q: got %v", body, err)
			}
			return
		case isArray && len(arr) == 0 && !allowEmpty:
			if !errors.Is(err, model.ErrEmptyJSONArray) {
				t.Fatalf("[] on append: got %v", err)
			}
			return
		case err != nil:
			t.Fatalf("valid JSON %q refused: %v", body, err)
		}
		want := []any{whole}
		if isArray {
			want = arr
		}
		if len(msgs) != len(want) {
			t.Fatalf("%q flattened to %d messages, want %d", body, len(msgs), len(want))
		}
		for i, m := range msgs {
			var c bytes.Buffer
			if err := json.Compact(&c, m); err != nil || !bytes.Equal(c.Bytes(), m) {
				t.Fatalf("message %d %q is not compact JSON (%v)", i, m, err)
			}
			if bytes.IndexByte(m, '\n') >= 0 {
				t.Fatalf("message %d %q holds a raw newline", i, m)
			}
			got, err := decode(m)
			if err != nil || !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("message %d %q means %v, want %v (%v)", i, m, got, want[i], err)
			}
		}
		canonical := model.CanonicalJSON(msgs)
		if n := bytes.Count(canonical, []byte("\n")); n != len(msgs) {
			t.Fatalf("canonical bytes hold %d newlines for %d messages", n, len(msgs))
		}
		array := model.JSONArrayFromCanonical(nil, canonical)
		var raw []json.RawMessage
		if err := json.Unmarshal(array, &raw); err != nil || len(raw) != len(msgs) {
			t.Fatalf("read array %q: %v (%d elements, want %d)", array, err, len(raw), len(msgs))
		}
		for i := range raw {
			if !bytes.Equal(raw[i], msgs[i]) {
				t.Fatalf("read array element %d is %q, want %q", i, raw[i], msgs[i])
			}
		}
		if len(msgs) > 0 {
			again, err := model.FlattenJSON(array, false)
			if err != nil || !reflect.DeepEqual(again, msgs) {
				t.Fatalf("flattening the read array %q gives %q (%v), want %q", array, again, err, msgs)
			}
		}
	})
}
