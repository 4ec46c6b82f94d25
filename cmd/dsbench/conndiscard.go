package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"
)

// errNoDiscard says a body cannot be discarded at the socket (not an unread connTransport
// body on a TCP connection, or neither a Content-Length nor a chunked one); nothing was
// read and the caller reads the body instead.
var errNoDiscard = errors.New("connTransport: body cannot be discarded at the socket")

// discardBody reads the whole body of resp, a connTransport response of which nothing was
// read yet, without copying its bytes into the process: bytes the connection's
// bufio.Reader already holds are skipped and the rest are taken from the socket with
// recv(2) MSG_TRUNC, which on TCP acknowledges and drops them inside the kernel. Both a
// Content-Length body and a chunked one (RFC 9112 §7.1; only its size lines and trailers
// are read into the process) are discarded so. buf sets the length each recv asks for (its
// contents are not written). It returns the body's bytes (chunked: the chunks' data); after
// it the body counts as read to its end and the connection is reused.
func discardBody(resp *http.Response, buf []byte) (int64, error) {
	b, ok := resp.Body.(*connBody)
	if !ok || b.eof || b.done || len(buf) == 0 {
		return 0, errNoDiscard
	}
	chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
	if resp.ContentLength < 0 && !chunked {
		return 0, errNoDiscard
	}
	sc, ok := b.t.conn.(syscall.Conn)
	if !ok {
		return 0, errNoDiscard
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, errNoDiscard
	}
	d := socketDiscarder{raw: raw, br: b.t.br, buf: buf}
	var n int64
	if chunked {
		n, err = d.chunks()
	} else {
		n, err = resp.ContentLength, d.skip(resp.ContentLength)
	}
	if err != nil {
		b.reuse = false
		return 0, err
	}
	b.eof, b.discarded = true, true
	return n, nil
}

// socketDiscarder drops bytes of a connection read through br.
type socketDiscarder struct {
	raw syscall.RawConn
	br  *bufio.Reader
	buf []byte
}

// skip drops the next n bytes: those br holds, then from the socket.
func (d socketDiscarder) skip(n int64) error {
	held, _ := d.br.Discard(int(min(int64(d.br.Buffered()), n)))
	for left := n - int64(held); left > 0; {
		var got int
		var rerr error
		err := d.raw.Read(func(fd uintptr) bool {
			got, _, rerr = syscall.Recvfrom(int(fd), d.buf[:min(int64(len(d.buf)), left)], syscall.MSG_TRUNC)
			return rerr != syscall.EAGAIN
		})
		if err == nil {
			err = rerr
		}
		if err == nil && got == 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		left -= int64(got)
	}
	return nil
}

// chunks drops a chunked body: each size line's chunk and its CRLF, up to the last
// chunk, then the trailer section; it returns the chunks' bytes.
func (d socketDiscarder) chunks() (int64, error) {
	var total int64
	for {
		line, err := d.line()
		if err != nil {
			return total, err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return total, fmt.Errorf("chunked body: bad chunk size line %q", line)
		}
		if size == 0 {
			break
		}
		if err := d.skip(size); err != nil {
			return total, err
		}
		total += size
		if crlf, err := d.line(); err != nil || len(crlf) != 0 {
			return total, fmt.Errorf("chunked body: no CRLF after a chunk (%v)", err)
		}
	}
	for { // trailer fields, up to the empty line
		line, err := d.line()
		if err != nil || len(line) == 0 {
			return total, err
		}
	}
}

// line reads one line through br, without its CRLF (or LF).
func (d socketDiscarder) line() ([]byte, error) {
	line, err := d.br.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("chunked body: %w", err)
	}
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
}
