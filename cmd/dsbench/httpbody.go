package main

import (
	"bytes"
	"fmt"
	"strconv"
)

// maxChunkLine bounds a chunk-size or trailer line of a chunked body (bytes).
const maxChunkLine = 4 << 10

// httpBody decodes an HTTP/1.1 response body incrementally (RFC 9112 §6.3): bytes go in as
// they arrive, split anywhere, and the body's data come out as slices of them. It is framed
// by chunked transfer coding (§7.1), by a Content-Length, or by the connection's close.
type httpBody struct {
	chunked bool
	left    int64 // Content-Length bytes still to come (-1: until close); chunked: of this chunk
	state   chunkState
	line    []byte // chunked: the size or trailer line so far
}

type chunkState uint8

const (
	chunkSize    chunkState = iota // in a chunk-size line
	chunkData                      // in a chunk's data (left bytes to go)
	chunkDataEnd                   // in the CRLF after a chunk's data
	chunkTrailer                   // in the trailer section, up to its empty line
	chunkDone                      // after the last chunk and the trailers
)

// newHTTPBody returns the decoder of a body framed by chunked coding, or else by
// contentLength bytes (-1: until the connection closes).
func newHTTPBody(chunked bool, contentLength int64) httpBody {
	if chunked {
		return httpBody{chunked: true}
	}
	return httpBody{left: contentLength}
}

// Next consumes bytes of p and returns the next run of body data among them (a sub-slice of
// p, maybe empty) and how many bytes of p it consumed. done says the body is complete: the
// caller must not pass more bytes. err reports a malformed chunked body.
func (b *httpBody) Next(p []byte) (data []byte, n int, done bool, err error) {
	if !b.chunked {
		if b.left < 0 {
			return p, len(p), false, nil
		}
		k := int(min(int64(len(p)), b.left))
		b.left -= int64(k)
		return p[:k], k, b.left == 0, nil
	}
	for n < len(p) && b.state != chunkDone {
		if b.state == chunkData {
			k := int(min(int64(len(p)-n), b.left))
			b.left -= int64(k)
			if b.left == 0 {
				b.state = chunkDataEnd
			}
			return p[n : n+k], n + k, false, nil
		}
		i := bytes.IndexByte(p[n:], '\n')
		if i < 0 {
			b.line = append(b.line, p[n:]...)
			n = len(p)
		} else {
			line := p[n : n+i]
			if len(b.line) > 0 {
				line = append(b.line, line...)
			}
			n += i + 1
			err = b.endLine(bytes.TrimSuffix(line, []byte{'\r'}))
			b.line = b.line[:0]
		}
		if err == nil && len(b.line) > maxChunkLine {
			err = fmt.Errorf("chunked body: line longer than %d bytes", maxChunkLine)
		}
		if err != nil {
			return nil, n, false, err
		}
	}
	return nil, n, b.state == chunkDone, nil
}

// endLine applies one line of chunked framing (without its CRLF).
func (b *httpBody) endLine(line []byte) error {
	switch b.state {
	case chunkSize:
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, err := strconv.ParseInt(string(bytes.TrimRight(line, " \t")), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("chunked body: bad chunk size line %q", line)
		}
		b.left, b.state = size, chunkData
		if size == 0 {
			b.state = chunkTrailer
		}
	case chunkDataEnd:
		if len(line) != 0 {
			return fmt.Errorf("chunked body: %q instead of CRLF after a chunk", line)
		}
		b.state = chunkSize
	case chunkTrailer:
		if len(line) == 0 {
			b.state = chunkDone
		}
	}
	return nil
}
