package httpd

import (
	"net/http"
	"unsafe"

	"github.com/dsd-project/dsd/model"
)

// offsetValue is a header value holding an offset token: the value slice and the token's
// bytes in one allocation (Header.Set with Offset.String makes two).
type offsetValue struct {
	v [1]string
	b [33]byte
}

// setOffset sets the canonical header key (Stream-Next-Offset) to o's wire token (B-5.2).
func setOffset(hd http.Header, key string, o model.Offset) {
	if o > model.MaxOffset { // not a wire position (Offset.String renders those)
		hd.Set(key, o.String())
		return
	}
	x := new(offsetValue)
	tok := o.AppendToken(x.b[:0]) // 33 bytes: fits x.b, written once, never again
	x.v[0] = unsafe.String(&x.b[0], len(tok))
	hd[key] = x.v[:1:1]
}
