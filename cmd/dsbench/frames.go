package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// appendFrame appends one append-batch frame (uint32 big-endian payload length, then the
// payload) to dst. Extension §4.1. Zero-length payloads are invalid on the wire; the caller
// must not pass one.
func appendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// encodeBatch returns an append-batch body holding one frame per payload.
func encodeBatch(payloads [][]byte) []byte {
	n := 0
	for _, p := range payloads {
		n += 4 + len(p)
	}
	body := make([]byte, 0, n)
	for _, p := range payloads {
		body = appendFrame(body, p)
	}
	return body
}

// decodeBatch splits an append-batch body back into payloads (used to check the encoder).
func decodeBatch(body []byte) ([][]byte, error) {
	var out [][]byte
	for len(body) > 0 {
		if len(body) < 4 {
			return nil, errors.New("truncated frame header")
		}
		n := binary.BigEndian.Uint32(body)
		body = body[4:]
		if n == 0 {
			return nil, errors.New("zero-length frame")
		}
		if uint64(n) > uint64(len(body)) {
			return nil, fmt.Errorf("frame of %d bytes, %d left", n, len(body))
		}
		out = append(out, body[:n])
		body = body[n:]
	}
	return out, nil
}

// batchAck is one element of an append-batch 200 response (extension §4.3).
type batchAck struct {
	Status           int             `json:"status"`
	StreamNextOffset json.RawMessage `json:"stream_next_offset,omitempty"` // a string token (D2); raw so a number does not fail decoding
	StreamClosed     bool            `json:"stream_closed,omitempty"`
	ErrorCode        string          `json:"error_code,omitempty"`
	Error            string          `json:"error,omitempty"`
}

// parseAcks decodes an append-batch response and checks it acknowledges exactly frames frames.
func parseAcks(body []byte, frames int) ([]batchAck, error) {
	var acks []batchAck
	if err := json.Unmarshal(body, &acks); err != nil {
		return nil, fmt.Errorf("append-batch response: %w", err)
	}
	if len(acks) != frames {
		return acks, fmt.Errorf("append-batch response: %d acks for %d frames", len(acks), frames)
	}
	return acks, nil
}
