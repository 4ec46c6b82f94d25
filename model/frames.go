package model

import (
	"encoding/binary"
	"fmt"
)

// MaxBatchFrames is the most frames one append-batch request may carry (extension §4.1,
// D5); more is 413.
const MaxBatchFrames = 512

// ParseBatchFrames splits an append-batch body into its frames (extension §4.1): each a
// uint32 big-endian payload length, then that many payload bytes. Frames are read in
// order and the first problem decides: an empty body, a truncated length, a zero
// length ("zero-length frames are invalid") or a payload running past the body are
// ErrBadBatch (400); a frame past the 512th is ErrTooLarge (413, D5). The frames alias
// body.
func ParseBatchFrames(body []byte) ([][]byte, error) {
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: empty batch", ErrBadBatch)
	}
	var frames [][]byte
	for len(body) > 0 {
		if len(body) < 4 {
			return nil, fmt.Errorf("%w: truncated frame length", ErrBadBatch)
		}
		n := uint64(binary.BigEndian.Uint32(body))
		body = body[4:]
		switch {
		case n == 0:
			return nil, fmt.Errorf("%w: zero-length frame", ErrBadBatch)
		case n > uint64(len(body)):
			return nil, fmt.Errorf("%w: truncated frame payload", ErrBadBatch)
		case len(frames) == MaxBatchFrames:
			return nil, fmt.Errorf("%w: more than %d frames", ErrTooLarge, MaxBatchFrames)
		}
		frames = append(frames, body[:n:n])
		body = body[n:]
	}
	return frames, nil
}

// AppendBatchFrame appends one frame (length prefix and payload) to dst (extension
// §4.1). Payloads longer than 2^32-1 bytes cannot be framed and panic.
func AppendBatchFrame(dst, payload []byte) []byte {
	if uint64(len(payload)) > 1<<32-1 {
		panic("model: append-batch frame longer than 2^32-1 bytes")
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}
