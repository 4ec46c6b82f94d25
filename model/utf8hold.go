package model

import "unicode/utf8"

// HeldTail is the number of bytes (0-3) at the end of data that begin a UTF-8 sequence
// the bytes so far cannot finish but later bytes could: SSE on text streams holds them
// back, so that no data event ends inside a code point (D9). Invalid bytes, which no
// later byte can complete, are not held (0).
func HeldTail(data []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(data); k++ {
		j := len(data) - k
		if !utf8.RuneStart(data[j]) {
			continue
		}
		if utf8.FullRune(data[j:]) {
			return 0
		}
		return k
	}
	return 0
}

// HeldPosition reports whether offset i inside msg (0 < i < len(msg)) is where SSE stops a
// text stream's data before msg's held tail: a read position like a message boundary
// (D9), so a client that resumes from that control event's streamNextOffset is served.
func HeldPosition(msg []byte, i int) bool {
	h := HeldTail(msg)
	return h > 0 && i > 0 && i == len(msg)-h
}

// textHolds reports whether SSE holds back incomplete UTF-8 on a stream of this media
// type: text/* streams (JSON messages are always complete UTF-8; others are base64).
func textHolds(mediaType string) bool { return IsTextual(mediaType) && !IsJSON(mediaType) }
