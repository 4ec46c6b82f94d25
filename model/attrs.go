package model

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxAttrsBytes bounds the encoded attribute object (extension §5.1, D5).
const MaxAttrsBytes = 16 << 10

// NormalizeAttrs validates a stream attribute object and returns its stored form
// (extension §5.1): a JSON object whose optional "title" is a string and optional
// "metadata" an object; unknown top-level fields are dropped, null fields count as
// absent, and {} (nothing left) normalizes to nil, "no attributes". The stored form is
// canonical (keys sorted at every level, number literals kept), so two objects that
// differ only in key order normalize equal. Errors: ErrBadAttrs, also when the stored
// form exceeds 16 KiB.
func NormalizeAttrs(raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return nil, ErrBadAttrs
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, ErrBadAttrs
	}
	if _, err := dec.Token(); err == nil {
		return nil, ErrBadAttrs
	}
	out := map[string]any{}
	if t, ok := obj["title"]; ok && t != nil {
		s, ok := t.(string)
		if !ok {
			return nil, ErrBadAttrs
		}
		out["title"] = s
	}
	if md, ok := obj["metadata"]; ok && md != nil {
		m, ok := md.(map[string]any)
		if !ok {
			return nil, ErrBadAttrs
		}
		out["metadata"] = m
	}
	if len(out) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(out)
	if err != nil || len(b) > MaxAttrsBytes {
		return nil, ErrBadAttrs
	}
	return b, nil
}
