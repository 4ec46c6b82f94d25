package fuzz

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/dsd-project/dsd/model"
)

// FuzzHeldTail: SSE's hold-back of an incomplete UTF-8 tail (D9). Whatever a text stream
// holds, cut anywhere into two reads: at most 3 bytes are held, the held bytes begin a
// sequence no byte has finished, the bytes sent plus the held bytes plus the rest are the
// stream unchanged, and when the stream is valid UTF-8 both events are too (no event ends
// inside a code point).
func FuzzHeldTail(f *testing.F) {
	f.Add([]byte("caf\xc3\xa9!"), uint(4))
	f.Add([]byte("\xf0\x9f\x98\x80x"), uint(2))
	f.Add([]byte("a\xff\xc3"), uint(3))
	f.Add([]byte("\xe2\x82\xac"), uint(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		c := int(cut % uint(len(data)+1))
		first := data[:c]
		h := model.HeldTail(first)
		if h < 0 || h > utf8.UTFMax-1 || h > len(first) {
			t.Fatalf("HeldTail(%q) = %d", first, h)
		}
		sent, held := first[:len(first)-h], first[len(first)-h:]
		if h > 0 && (!utf8.RuneStart(held[0]) || utf8.FullRune(held)) {
			t.Fatalf("HeldTail(%q) holds %q, which is not an unfinished sequence", first, held)
		}
		next := append(append([]byte{}, held...), data[c:]...)
		if !bytes.Equal(append(append([]byte{}, sent...), next...), data) {
			t.Fatal("hold-back lost or reordered bytes")
		}
		if utf8.Valid(data) && (!utf8.Valid(sent) || !utf8.Valid(next)) {
			t.Fatalf("valid %q cut at %d: events %q and %q are not whole UTF-8", data, c, sent, next)
		}
		if h > 0 && len(first) > h && !model.HeldPosition(first, len(first)-h) {
			t.Fatalf("HeldPosition(%q, %d) is false", first, len(first)-h)
		}
	})
}
