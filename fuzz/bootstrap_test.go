package fuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/dsd-project/dsd/model"
)

var bootstrapStreams atomic.Uint64

// serve sends one request to the shared handler.
func serve(t *testing.T, method, path string, hdr map[string]string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if len(body) == 0 {
		r.Body = http.NoBody
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	sharedHandler(t).ServeHTTP(w, r)
	return w
}

// bootstrapTypes are the stream types the target writes: binary and text payloads go in
// raw; on the JSON stream each payload is the JSON string of its bytes (invalid UTF-8
// replaced), so its part is that string's compact JSON.
var bootstrapTypes = []string{"application/octet-stream", "text/plain", "application/json"}

// FuzzBootstrapMultipart: /bootstrap as RFC 2046 multipart/mixed (extension §3.2, D5).
// Hostile payloads (boundary look-alikes, CRLF and "--" runs, header-like lines, bytes
// of any value) are appended to a fresh stream through the HTTP handler, by POST or
// append-batch, with a snapshot of hostile bytes at a message boundary; GET /bootstrap
// parsed with mime/multipart must give the snapshot part and then every message after
// the snapshot, one per part, byte-exact, each with its Content-Type, and the boundary
// must occur in no part.
func FuzzBootstrapMultipart(f *testing.F) {
	f.Add([]byte("hello world"), []byte{4}, []byte("snap"), uint8(0), uint8(1), false)
	f.Add([]byte("--dsd-bootstrap-\r\n--\r\n\r\nContent-Type: text/html\r\n\r\nx--"), []byte{15, 3, 1}, []byte("\r\n--dsd-bootstrap-"), uint8(0), uint8(0), true)
	f.Add([]byte("\r\n\r\n--\n--\r--"), []byte{0, 0, 0, 0}, []byte{}, uint8(1), uint8(2), false)
	f.Add([]byte{0, 0xff, '\r', '\n', '-', '-', 0x80}, []byte{1, 1, 1}, []byte{'-', '-'}, uint8(2), uint8(3), true)
	f.Add([]byte(`"\u0000" {"a":1} [1,2]`), []byte{5, 6}, []byte("{}"), uint8(2), uint8(1), false)
	f.Fuzz(func(t *testing.T, data, cuts, snap []byte, typ, snapAfter uint8, batch bool) {
		payloads := splitPayloads(data, cuts)
		if len(payloads) == 0 || len(payloads) > 64 {
			return
		}
		ct := bootstrapTypes[int(typ)%len(bootstrapTypes)]
		if ct == "application/json" {
			for i, p := range payloads {
				payloads[i], _ = json.Marshal(string(p)) // never fails; invalid UTF-8 becomes U+FFFD
			}
		}
		path := fmt.Sprintf("/fuzz/mp-%d", bootstrapStreams.Add(1))
		if w := serve(t, "PUT", path, map[string]string{"Content-Type": ct}, nil); w.Code != 201 {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
		var offsets []string // Stream-Next-Offset after each payload
		if batch {
			var body []byte
			for _, p := range payloads {
				body = model.AppendBatchFrame(body, p)
			}
			w := serve(t, "POST", path+"/append-batch", map[string]string{"Content-Type": ct}, body)
			var acks []struct {
				Status int    `json:"status"`
				Next   string `json:"stream_next_offset"`
			}
			if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &acks) != nil || len(acks) != len(payloads) {
				t.Fatalf("append-batch: %d %s", w.Code, w.Body)
			}
			for _, a := range acks {
				if a.Status != 204 {
					t.Fatalf("append-batch frame: %+v", a)
				}
				offsets = append(offsets, a.Next)
			}
		} else {
			for _, p := range payloads {
				w := serve(t, "POST", path, map[string]string{"Content-Type": ct}, p)
				if w.Code != 204 {
					t.Fatalf("append %q: %d %s", p, w.Code, w.Body)
				}
				offsets = append(offsets, w.Header().Get("Stream-Next-Offset"))
			}
		}
		first, snapCT := []byte{}, "application/octet-stream"
		updates := payloads
		if k := int(snapAfter) % (len(payloads) + 2); k <= len(payloads) {
			at := "0000000000000000_0000000000000000"
			if k > 0 {
				at = offsets[k-1]
			}
			snapCT = bootstrapTypes[(int(typ)+k)%len(bootstrapTypes)]
			w := serve(t, "PUT", path+"/snapshot/"+url.PathEscape(at), map[string]string{"Content-Type": snapCT}, snap)
			if w.Code != 204 {
				t.Fatalf("snapshot at %s: %d %s", at, w.Code, w.Body)
			}
			first, updates = snap, payloads[k:]
		}
		w := serve(t, "GET", path+"/bootstrap", nil, nil)
		if w.Code != 200 {
			t.Fatalf("bootstrap: %d %s", w.Code, w.Body)
		}
		mt, params, err := mime.ParseMediaType(w.Header().Get("Content-Type"))
		boundary := params["boundary"]
		if err != nil || mt != "multipart/mixed" || boundary == "" {
			t.Fatalf("bootstrap Content-Type %q: %v", w.Header().Get("Content-Type"), err)
		}
		mr := multipart.NewReader(bytes.NewReader(w.Body.Bytes()), boundary)
		want := append([][]byte{first}, updates...)
		for i := 0; ; i++ {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("%d parts, want %d", i, len(want))
				}
				return
			}
			if err != nil {
				t.Fatalf("part %d: %v\n%q", i, err, w.Body.Bytes())
			}
			got, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("part %d: %v", i, err)
			}
			wantCT := ct
			if i == 0 {
				wantCT = snapCT
			}
			switch {
			case i >= len(want):
				t.Fatalf("part %d of %d: %q", i, len(want), got)
			case !bytes.Equal(got, want[i]):
				t.Fatalf("part %d is %q, want %q", i, got, want[i])
			case p.Header.Get("Content-Type") != wantCT:
				t.Fatalf("part %d has Content-Type %q, want %q", i, p.Header.Get("Content-Type"), wantCT)
			case bytes.Contains(got, []byte(boundary)):
				t.Fatalf("part %d holds the boundary %q", i, boundary)
			}
		}
	})
}
