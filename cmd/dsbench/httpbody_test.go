package main

import (
	"strings"
	"testing"
)

// decodeSplit runs an httpBody over in, split after each offset of cuts. It returns the
// body's data, whether it completed, where (bytes of in consumed when done), and the error.
func decodeSplit(b httpBody, in string, cuts ...int) (data string, done bool, at int, err error) {
	var out strings.Builder
	pos := 0
	bounds := append(append([]int(nil), cuts...), len(in))
	for _, end := range bounds {
		p := []byte(in[pos:end])
		for len(p) > 0 {
			d, n, fin, e := b.Next(p)
			out.Write(d)
			p, pos = p[n:], pos+n
			if e != nil || fin {
				return out.String(), fin, pos, e
			}
		}
	}
	return out.String(), false, pos, nil
}

// A chunked body with an extension, a chunk split over size lines of both line endings and
// a trailer section (RFC 9112 §7.1), then bytes that are not the body's.
const chunkedIn = "5\r\nhello\r\n1;name=\"v\"\r\n \r\n6\nworld!\n0\r\nTrailer: x\r\n\r\nNEXT"

func TestHTTPBodyChunkedAtEverySplit(t *testing.T) {
	end := len(chunkedIn) - len("NEXT")
	for i := 0; i <= len(chunkedIn); i++ {
		for j := i; j <= len(chunkedIn); j++ {
			data, done, at, err := decodeSplit(newHTTPBody(true, -1), chunkedIn, i, j)
			if err != nil || !done || at != end || data != "hello world!" {
				t.Fatalf("cut at %d and %d: data %q done %v at %d (want %d) err %v", i, j, data, done, at, end, err)
			}
		}
	}
}

func TestHTTPBodyChunkedRejectsBadFraming(t *testing.T) {
	for _, in := range []string{
		"zz\r\nhello\r\n0\r\n\r\n",    // size is not hex
		"-5\r\nhello\r\n0\r\n\r\n",    // negative size
		"5\r\nhelloXX\r\n0\r\n\r\n",   // no CRLF after the data
		strings.Repeat("1", 5000),     // size line without end
		"5\r\nhello\r\n" + "\r\n\r\n", // empty size line
	} {
		if _, done, _, err := decodeSplit(newHTTPBody(true, -1), in); err == nil || done {
			t.Errorf("%.20q: done=%v err=%v, want an error", in, done, err)
		}
	}
}

func TestHTTPBodyLengthAndUntilClose(t *testing.T) {
	in := "0123456789tail"
	for i := 0; i <= len(in); i++ {
		data, done, at, err := decodeSplit(newHTTPBody(false, 10), in, i)
		if err != nil || !done || at != 10 || data != "0123456789" {
			t.Fatalf("length 10, cut at %d: %q done %v at %d err %v", i, data, done, at, err)
		}
		data, done, _, err = decodeSplit(newHTTPBody(false, -1), in, i)
		if err != nil || done || data != in {
			t.Fatalf("until close, cut at %d: %q done %v err %v", i, data, done, err)
		}
	}
}
