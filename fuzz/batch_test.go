package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// encodeFrames is the fuzz target's own append-batch encoder (extension §4.1): each
// payload as a uint32 big-endian length and its bytes.
func encodeFrames(payloads [][]byte) []byte {
	var out []byte
	for _, p := range payloads {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		out = append(append(out, n[:]...), p...)
	}
	return out
}

// splitPayloads cuts data into payloads at the lengths cuts gives (each byte one cut of
// 1..256 bytes; empty cuts: one payload), so the fuzzer controls frame boundaries.
func splitPayloads(data, cuts []byte) [][]byte {
	var out [][]byte
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if i < len(cuts) {
			n = min(n, int(cuts[i])+1)
		}
		out = append(out, data[:n])
		data = data[n:]
	}
	return out
}

// FuzzBatchFrames: append-batch framing (extension §4.1, D5).
//
//   - Round trip: payloads framed by our own encoder parse back, with httpd.ParseFrames,
//     to exactly those payloads (up to 512 frames; more is 413).
//   - Any body: httpd.ParseFrames never panics, refuses malformed framing with
//     INVALID_BATCH (400) or too many frames with PAYLOAD_TOO_LARGE (413), and what it
//     accepts re-encodes to the very same bytes (nothing skipped, nothing invented).
//   - The model's parser (model.ParseBatchFrames) decides every body alike.
func FuzzBatchFrames(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x01a\x00\x00\x00\x02bc"), []byte("abc"), []byte{0, 1})
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add([]byte("\x00\x00\x00\x00"), []byte("x"), []byte{})
	f.Add([]byte("\x00\x00\x00\x05ab"), []byte("hello world"), []byte{4, 0, 255})
	f.Add([]byte("\x00\x00"), bytes.Repeat([]byte("z"), 600), []byte{})
	f.Add(bytes.Repeat([]byte("\x00\x00\x00\x01q"), 513), bytes.Repeat([]byte("y"), 513), bytes.Repeat([]byte{0}, 513))
	f.Add([]byte("\xff\xff\xff\xffab"), []byte("[1,2]"), []byte{1})
	f.Fuzz(func(t *testing.T, body, data, cuts []byte) {
		frames, err := httpd.ParseFrames(body)
		mframes, merr := model.ParseBatchFrames(body)
		if model.ErrorCode(err) != model.ErrorCode(merr) || !reflect.DeepEqual(frames, mframes) {
			t.Fatalf("httpd and the model disagree on %q: (%d frames, %v) vs (%d frames, %v)", body,
				len(frames), err, len(mframes), merr)
		}
		switch {
		case err == nil:
			if len(frames) == 0 || len(frames) > model.MaxBatchFrames {
				t.Fatalf("accepted %d frames", len(frames))
			}
			for _, fr := range frames {
				if len(fr) == 0 {
					t.Fatalf("accepted a zero-length frame in %q", body)
				}
			}
			if enc := encodeFrames(frames); !bytes.Equal(enc, body) {
				t.Fatalf("accepted %q but its frames re-encode to %q", body, enc)
			}
		case errors.Is(err, model.ErrBadBatch), errors.Is(err, model.ErrTooLarge):
		default:
			t.Fatalf("refused %q with %v: neither INVALID_BATCH nor PAYLOAD_TOO_LARGE", body, err)
		}

		payloads := splitPayloads(data, cuts)
		got, err := httpd.ParseFrames(encodeFrames(payloads))
		switch {
		case len(payloads) == 0:
			if !errors.Is(err, model.ErrBadBatch) {
				t.Fatalf("an empty batch: %v", err)
			}
		case len(payloads) > model.MaxBatchFrames:
			if !errors.Is(err, model.ErrTooLarge) {
				t.Fatalf("%d frames: %v, want PAYLOAD_TOO_LARGE", len(payloads), err)
			}
		case err != nil:
			t.Fatalf("%d well-formed frames refused: %v", len(payloads), err)
		case !reflect.DeepEqual(got, payloads):
			t.Fatalf("round trip of %d frames gave %d different ones", len(payloads), len(got))
		}
	})
}
