package httpd

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/dsd-project/dsd/model"
)

// decodeRequestBody makes a request body sent with Content-Encoding: gzip read as its
// decoded bytes, before any check (D12): the body limits of readBody then bound the
// decoded size, so a gzip bomb stops at the limit (413), and the stored bytes are always
// the decoded data. identity is accepted as no coding; any other coding is
// model.ErrBadContentEncoding (415). A corrupt gzip stream fails the body read
// (model.ErrBadBody, 400). A decoded body is a copy of r's: net/http must still find its own
// body in its request (to tell a body closed early, A-27's Connection: close, and end the
// connection without a reset).
func decodeRequestBody(r *http.Request) (*http.Request, error) {
	vals := r.Header.Values("Content-Encoding")
	if len(vals) == 0 {
		return r, nil
	}
	coding := strings.ToLower(strings.TrimSpace(strings.Join(vals, ",")))
	switch coding {
	case "", "identity":
	case "gzip", "x-gzip":
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			d := *r
			d.Body, d.ContentLength = &gzipBody{src: r.Body}, -1
			r = &d
		}
	default:
		return r, model.ErrBadContentEncoding
	}
	r.Header.Del("Content-Encoding")
	return r, nil
}

// gzipBody decodes a gzip request body; the decoder is made at the first read, so that a
// body that never gets read costs nothing.
type gzipBody struct {
	src io.ReadCloser
	zr  *gzip.Reader
	err error
}

func (b *gzipBody) Read(p []byte) (int, error) {
	if b.zr == nil && b.err == nil {
		b.zr, b.err = gzip.NewReader(b.src)
		if errors.Is(b.err, io.EOF) {
			b.err = io.EOF // no bytes at all: an empty body
		} else if b.err != nil {
			b.err = errors.New("Content-Encoding: gzip, but the body is not gzip data: " + b.err.Error())
		}
	}
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.zr.Read(p)
	if err != nil && err != io.EOF {
		err = errors.New("gzip body: " + err.Error())
	}
	return n, err
}

func (b *gzipBody) Close() error { return b.src.Close() }
