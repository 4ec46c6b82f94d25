package fuzz

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// reencode writes v as JSON with the keys of every object in an order drawn from rng
// (json.Marshal would sort them), numbers as their literals.
func reencode(dst *bytes.Buffer, v any, rng *rand.Rand) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		dst.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				dst.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			dst.Write(kb)
			dst.WriteByte(':')
			reencode(dst, x[k], rng)
		}
		dst.WriteByte('}')
	case []any:
		dst.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				dst.WriteByte(',')
			}
			reencode(dst, e, rng)
		}
		dst.WriteByte(']')
	default:
		b, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		dst.Write(b)
	}
}

// FuzzAttrsNormalize: the stream attribute normaliser (extension §5.1, §5.2, D5).
//
//   - It never panics; what it accepts is a JSON object of at most 16 KiB holding only
//     "title" (a string) and "metadata" (an object), or nil for "no attributes".
//   - Idempotent: normalizing the stored form gives it back (and nil stands for {}).
//   - Order-insensitive: the same object with its keys written in another order, at
//     any depth, normalizes to the same bytes; so does the object with an unknown
//     top-level field added (unknown fields are dropped).
func FuzzAttrsNormalize(f *testing.F) {
	for _, s := range []string{`{}`, `{"title":"t"}`, `{"title":"t","metadata":{"b":[1,{"y":1,"x":2}],"a":null}}`,
		`{"x":1}`, `{"title":null,"metadata":null}`, `{"title":5}`, `{"metadata":[]}`, `[]`, `null`, `{`,
		`{"title":"a","title":"b"}`, `{"metadata":{"n":1e400,"m":-0.0}}`, `{"title":"<&>\u2028"}`,
		"{\"title\":\"\xff\"}", `{"title":"t"} `, `{"title":"t"}{}`} {
		f.Add([]byte(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		norm, err := model.NormalizeAttrs(raw)
		if err != nil {
			return
		}
		if norm == nil {
			if again, err := model.NormalizeAttrs([]byte(`{}`)); err != nil || again != nil {
				t.Fatalf("{} normalizes to %q, %v; want nil like %q", again, err, raw)
			}
		} else {
			if len(norm) > model.MaxAttrsBytes {
				t.Fatalf("stored form of %d bytes", len(norm))
			}
			var obj map[string]any
			sd := json.NewDecoder(bytes.NewReader(norm))
			sd.UseNumber()
			if err := sd.Decode(&obj); err != nil {
				t.Fatalf("stored form %q is not a JSON object: %v", norm, err)
			}
			for k, v := range obj {
				_, isString := v.(string)
				_, isObject := v.(map[string]any)
				if !(k == "title" && isString) && !(k == "metadata" && isObject) {
					t.Fatalf("stored form %q keeps field %q = %v", norm, k, v)
				}
			}
			again, err := model.NormalizeAttrs(norm)
			if err != nil || !bytes.Equal(again, norm) {
				t.Fatalf("not idempotent: %q -> %q -> %q, %v", raw, norm, again, err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted %q, which does not decode as an object: %v", raw, err)
		}
		rng := rand.New(rand.NewPCG(seed, seed>>1))
		var shuffled bytes.Buffer
		reencode(&shuffled, v, rng)
		if got, err := model.NormalizeAttrs(shuffled.Bytes()); err != nil || !bytes.Equal(got, norm) {
			t.Fatalf("key order matters: %q -> %q but %q -> %q, %v", raw, norm, shuffled.Bytes(), got, err)
		}
		v["unknown-field"] = []any{json.Number("1"), "x"}
		var extra bytes.Buffer
		reencode(&extra, v, rng)
		if got, err := model.NormalizeAttrs(extra.Bytes()); err != nil || !bytes.Equal(got, norm) {
			t.Fatalf("an unknown field is kept: %q -> %q but %q -> %q, %v", raw, norm, extra.Bytes(), got, err)
		}
	})
}
