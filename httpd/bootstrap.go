package httpd

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// bootstrapChunk is how much update data one bootstrap step reads.
const bootstrapChunk = 1 << 20

// errBoundaryInPart aborts a bootstrap whose random boundary occurs in a part (never sent).
var errBoundaryInPart = errors.New("bootstrap boundary occurs in a part")

// bootstrap serves GET {stream}/bootstrap (extension §3): an RFC 2046 multipart/mixed body
// whose first part is the snapshot (or an empty application/octet-stream part) and whose
// following parts are the retained messages after it, one per part, streamed in bounded
// memory.
func (h *Handler) bootstrap(w http.ResponseWriter, r *http.Request, t target) error {
	if _, ok := r.URL.Query()["live"]; ok {
		return model.ErrBootstrapLive
	}
	b, err := h.store.OpenBootstrap(t.key)
	if err != nil {
		return err
	}
	defer b.Close()
	boundary := newBoundary()
	hd := w.Header()
	hd.Set(hContentType, "multipart/mixed; boundary="+boundary)
	hd.Set(hNextOffset, b.Info.Tail.String())
	hd.Set(hUpToDate, "true")
	hd.Set("Cache-Control", ccNoStore)
	if b.Snapshot != nil {
		hd.Set(hSnapshotOffset, b.Snapshot.Offset.String())
		hd.Set(hSnapshotDigest, b.Snapshot.Digest)
	} else {
		hd.Set(hSnapshotOffset, "-1")
	}
	if b.Info.Closed {
		hd.Set(hStreamClosed, "true")
	}
	if b.Info.JSON() {
		setRecordBounds(hd, b.Info)
		hd.Set(hRecordStart, strconv.FormatUint(b.FromRec, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if err := writeBootstrap(heldWriter{h, w, r}, w, b, boundary); err != nil {
		panic(http.ErrAbortHandler) // a broken multipart body must not look complete
	}
	return nil
}

// writeBootstrap writes the parts to out (w's body); it fails, before writing it, on a
// part holding the boundary (D5).
func writeBootstrap(out io.Writer, w http.ResponseWriter, b *engine.Bootstrap, boundary string) error {
	mw := multipart.NewWriter(out)
	if err := mw.SetBoundary(boundary); err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	first := b.Body
	ct := model.DefaultContentType
	if b.Snapshot != nil {
		ct = b.Snapshot.ContentType
	}
	if err := writePart(mw, boundary, ct, first); err != nil {
		return err
	}
	for {
		res, err := b.Next(bootstrapChunk)
		if err != nil {
			return err
		}
		if len(res.Data) == 0 {
			if res.Next != b.Info.Tail {
				return fmt.Errorf("bootstrap ended at %v before %v", res.Next, b.Info.Tail)
			}
			break
		}
		start := 0
		for _, end := range res.Ends {
			msg := res.Data[start:end]
			if res.Info.JSON() {
				msg = bytes.TrimSuffix(msg, []byte("\n"))
			}
			if err := writePart(mw, boundary, res.Info.ContentType, msg); err != nil {
				return err
			}
			start = end
		}
		_ = rc.Flush()
	}
	return mw.Close()
}

func writePart(mw *multipart.Writer, boundary, ct string, body []byte) error {
	if bytes.Contains(body, []byte(boundary)) {
		return errBoundaryInPart
	}
	pw, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {ct}})
	if err != nil {
		return err
	}
	_, err = pw.Write(body)
	return err
}

// newBoundary returns a random multipart boundary (D5).
func newBoundary() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "dsd-bootstrap-" + hex.EncodeToString(b[:])
}
