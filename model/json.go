package model

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxMessagesPerRequest bounds the messages one JSON request body (or one append-batch
// request, all frames together) may create: each message costs an index entry and memory
// while it commits, and one commit group must stay small enough not to stall the others.
const MaxMessagesPerRequest = 100_000

// FlattenJSON turns a JSON-mode request body into its messages (B-9.1-02, D3): one level
// of a top-level array is flattened, any other value is one message. Each message is
// returned compact (encoding/json.Compact: key order and number literals kept), without
// the trailing "\n" of its canonical bytes. allowEmpty says whether "[]" is accepted (PUT)
// or rejected (POST, B-9.1-03).
// Errors: ErrInvalidJSON (also for invalid UTF-8, A-21), ErrEmptyJSONArray,
// ErrTooManyMessages (more than MaxMessagesPerRequest).
func FlattenJSON(body []byte, allowEmpty bool) ([][]byte, error) {
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, ErrInvalidJSON
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return [][]byte{compact(body)}, nil
	}
	elems, err := arrayElements(body)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		if allowEmpty {
			return nil, nil
		}
		return nil, ErrEmptyJSONArray
	}
	msgs := make([][]byte, len(elems))
	for i, e := range elems {
		msgs[i] = compact(e)
	}
	return msgs, nil
}

// arrayElements splits a valid top-level JSON array into its elements. Bodies too short
// to hold MaxMessagesPerRequest elements are unmarshalled at once; longer ones are
// decoded element by element, so that an oversized array fails before it is in memory.
func arrayElements(body []byte) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	if len(body) < 2*MaxMessagesPerRequest {
		if err := json.Unmarshal(body, &elems); err != nil {
			return nil, ErrInvalidJSON
		}
		return elems, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, ErrInvalidJSON
	}
	for dec.More() {
		if len(elems) == MaxMessagesPerRequest {
			return nil, ErrTooManyMessages
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, ErrInvalidJSON
		}
		elems = append(elems, raw)
	}
	return elems, nil
}

func compact(v []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(v))
	if err := json.Compact(&b, v); err != nil {
		panic("model: compact of validated JSON failed: " + err.Error())
	}
	return b.Bytes()
}

// CanonicalJSON returns the canonical stream bytes of messages: each message followed by
// "\n" (D3). Offsets and record ordinals address these bytes.
func CanonicalJSON(msgs [][]byte) []byte {
	n := 0
	for _, m := range msgs {
		n += len(m) + 1
	}
	out := make([]byte, 0, n)
	for _, m := range msgs {
		out = append(append(out, m...), '\n')
	}
	return out
}

// JSONArrayFromCanonical renders canonical JSON-mode bytes (messages each ending in "\n")
// as the JSON array an ordinary read returns (B-9.1-04): "[m1,m2,...]". Compact JSON holds
// no raw newline, so "\n" delimits messages exactly.
func JSONArrayFromCanonical(dst, canonical []byte) []byte {
	dst = append(dst, '[')
	first := true
	for len(canonical) > 0 {
		i := bytes.IndexByte(canonical, '\n')
		if i < 0 {
			i = len(canonical)
		}
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, canonical[:i]...)
		first = false
		if i == len(canonical) {
			break
		}
		canonical = canonical[i+1:]
	}
	return append(dst, ']')
}
