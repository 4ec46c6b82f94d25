package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// HTTPTarget runs commands as HTTP requests on the bucketed surface (D1) of a handler,
// in process (httptest.ResponseRecorder), and reads back status, headers and body.
type HTTPTarget struct {
	H http.Handler
}

// Request renders cmd as the HTTP request a client would send.
func Request(cmd model.Command) *http.Request {
	var (
		method, path string
		query        url.Values
		hdr          = http.Header{}
		body         []byte
	)
	set := func(name string, v *string) {
		if v != nil {
			hdr[http.CanonicalHeaderKey(name)] = []string{*v}
		}
	}
	switch c := cmd.(type) {
	case model.CreateBucket:
		method, path = http.MethodPut, "/"+url.PathEscape(c.Bucket)
	case model.GetBucket:
		method, path = http.MethodGet, "/"+url.PathEscape(c.Bucket)
	case model.DeleteBucket:
		method, path = http.MethodDelete, "/"+url.PathEscape(c.Bucket)
	case model.CreateStream:
		method, path, body = http.MethodPut, streamPath(c.Stream), c.Body
		set("Content-Type", c.ContentType)
		set("Stream-TTL", c.TTL)
		set("Stream-Expires-At", c.ExpiresAt)
		set("Stream-Closed", c.Closed)
		set("Stream-Attrs", c.Attrs)
		set("Stream-Forked-From", c.ForkedFrom)
		set("Stream-Fork-Offset", c.ForkOffset)
		set("Stream-Fork-Sub-Offset", c.ForkSubOffset)
	case model.AppendStream:
		method, path, body = http.MethodPost, streamPath(c.Stream), c.Body
		set("Content-Type", c.ContentType)
		set("Stream-Closed", c.Closed)
		set("Producer-Id", c.ProducerID)
		set("Producer-Epoch", c.ProducerEpoch)
		set("Producer-Seq", c.ProducerSeq)
		set("Stream-Seq", c.StreamSeq)
		set("Stream-Record-Match", c.RecordMatch)
	case model.ReadStream:
		method, path = http.MethodGet, streamPath(c.Stream)
		query = url.Values{}
		for name, v := range map[string]*string{"offset": c.Offset, "record": c.Record,
			"tail_records": c.TailRecords, "max_records": c.MaxRecords, "record_view": c.RecordView,
			"max_bytes": c.MaxBytes} {
			if v != nil {
				query[name] = []string{*v}
			}
		}
	case model.HeadStream:
		method, path = http.MethodHead, streamPath(c.Stream)
	case model.DeleteStream:
		method, path = http.MethodDelete, streamPath(c.Stream)
	default:
		var ok bool
		if method, path, query, body, ok = extensionRequest(cmd, set); !ok {
			panic(fmt.Sprintf("difftest: unknown command %T", cmd))
		}
	}
	u := &url.URL{Scheme: "http", Host: "dsd.test", RawPath: path}
	u.Path, _ = url.PathUnescape(path)
	u.RawQuery = query.Encode()
	r := httptest.NewRequest(method, "http://dsd.test/", bytes.NewReader(body))
	r.URL, r.RequestURI = u, u.RequestURI()
	r.Header = hdr
	r.ContentLength = int64(len(body))
	if len(body) == 0 {
		r.Body = http.NoBody
	}
	return r
}

// streamPath is the escaped path "/{bucket}/{stream}": each id is escaped by
// url.PathEscape, so a "/" inside an id travels as %2F.
func streamPath(k model.StreamKey) string {
	return "/" + url.PathEscape(k.Bucket) + "/" + url.PathEscape(k.Stream)
}

// Do implements Target.
func (t HTTPTarget) Do(cmd model.Command) Observation {
	r := Request(cmd)
	w := httptest.NewRecorder()
	t.H.ServeHTTP(w, r)
	return FromHTTP(cmd, w.Result().StatusCode, w.Header(), w.Body.Bytes())
}

// FromHTTP normalizes an HTTP response to cmd.
func FromHTTP(cmd model.Command, status int, h http.Header, body []byte) Observation {
	o := Observation{Status: status, Header: map[string]string{}}
	for _, k := range comparedHeaders {
		if v := h.Get(k); v != "" {
			o.Header[k] = v
		}
	}
	if loc := o.Header[hLocation]; loc != "" {
		o.Header[hLocation] = "present"
		if status == http.StatusTemporaryRedirect {
			o.Header[hLocation] = redirectTarget(cmd, loc)
		}
	}
	if status >= 300 && status != http.StatusTemporaryRedirect {
		delete(o.Header, hContentType)
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err == nil {
			o.Code = e.Error.Code
		} else if _, isHead := cmd.(model.HeadStream); !isHead {
			o.Code = "UNPARSED: " + string(body)
		} else {
			o.Code = CodeNoBody
		}
		return o
	}
	switch cmd.(type) {
	case model.ReadStream:
		o.Body = string(body)
	case model.GetBucket:
		delete(o.Header, hContentType)
		var b struct {
			ID      string `json:"bucket_id"`
			Streams int    `json:"streams"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			o.Body = "UNPARSED: " + string(body)
		} else {
			o.Body = bucketBody(b.ID, b.Streams)
		}
	case model.AppendStream, model.DeleteStream, model.DeleteBucket, model.CreateBucket:
		delete(o.Header, hContentType)
	default:
		extensionObservation(cmd, &o, body)
	}
	return o
}

// CodeNoBody stands for the error code of a HEAD error response, which has no body
// only its status can be compared.
const CodeNoBody = "(HEAD: no body)"

// redirectTarget renders the Location of GET {stream}/snapshot's 307 as
// "snapshot/{offset}" when it names {stream}/snapshot/{offset} (extension §2.3).
func redirectTarget(cmd model.Command, loc string) string {
	c, ok := cmd.(model.GetSnapshot)
	u, err := url.Parse(loc)
	if !ok || err != nil {
		return "UNEXPECTED: " + loc
	}
	prefix := streamPath(c.Stream) + "/snapshot/"
	rest, found := strings.CutPrefix(u.EscapedPath(), prefix)
	if !found {
		return "UNEXPECTED: " + loc
	}
	tok, err := url.PathUnescape(rest)
	if err != nil {
		return "UNEXPECTED: " + loc
	}
	return "snapshot/" + tok
}
