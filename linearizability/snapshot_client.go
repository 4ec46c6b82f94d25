package linearizability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// partDigest is the D5 digest of a received blob: its media type and bytes.
func partDigest(contentType string, body []byte) string {
	mt, err := model.MediaType(contentType)
	if err != nil {
		mt = contentType
	}
	return model.SnapshotDigest(mt, body)
}

// PublishSnapshot implements Client.
func (c EngineClient) PublishSnapshot(stream, tok, blob string) Output {
	o, err := model.ParseOffset(tok)
	if err != nil {
		return Output{Error: err.Error()}
	}
	info, err := c.Store.PublishSnapshot(c.key(stream), engine.SnapshotRequest{At: engine.Position{Offset: o},
		ContentType: SnapshotType, Body: []byte(blob)})
	if err != nil {
		return errorOutput(err)
	}
	return Output{Status: 204, SnapOffset: info.Offset.String(), SnapDigest: info.Digest}
}

// SetRetention implements Client.
func (c EngineClient) SetRetention(stream, tok string) Output {
	o, err := model.ParseOffset(tok)
	if err != nil {
		return Output{Error: err.Error()}
	}
	info, err := c.Store.SetRetention(c.key(stream), engine.Position{Offset: o})
	if err != nil {
		return errorOutput(err)
	}
	out := Output{Status: 204, Offset: info.Tail.String()}
	if info.JSON() {
		out.RecFirst, out.RecNext = u64p(info.RecordFirst), u64p(info.RecordNext)
	}
	return out
}

// ReadSnapshot implements Client.
func (c EngineClient) ReadSnapshot(stream string) Output {
	info, body, err := c.Store.Snapshot(c.key(stream), nil)
	if err != nil {
		return errorOutput(err)
	}
	sn := info.Snapshot
	return Output{Status: 200, SnapOffset: sn.Offset.String(), SnapDigest: sn.Digest, Blob: partDigest(sn.ContentType, body)}
}

// Bootstrap implements Client: the snapshot part, then every update up to the tail.
func (c EngineClient) Bootstrap(stream string) Output {
	b, err := c.Store.OpenBootstrap(c.key(stream))
	if err != nil {
		return errorOutput(err)
	}
	defer b.Close()
	out := Output{Status: 200, Offset: b.Info.Tail.String(), Closed: b.Info.Closed, SnapOffset: "-1",
		Blob: partDigest(model.DefaultContentType, b.Body)}
	if b.Info.JSON() {
		out.RecFirst, out.RecStart, out.RecNext = u64p(b.Info.RecordFirst), u64p(b.FromRec), u64p(b.Info.RecordNext)
	}
	if sn := b.Snapshot; sn != nil {
		out.SnapOffset, out.SnapDigest, out.Blob = sn.Offset.String(), sn.Digest, partDigest(sn.ContentType, b.Body)
	}
	var data []byte
	for {
		res, err := b.Next(1 << 20)
		if err != nil {
			return errorOutput(err)
		}
		if len(res.Data) == 0 {
			break
		}
		data = append(data, res.Data...)
		out.Msgs += uint64(len(res.Ends))
	}
	out.Len, out.Digest = uint64(len(data)), DigestOf(data)
	return out
}

// PublishSnapshot implements Client: PUT {stream}/snapshot/{offset}.
func (c *HTTPClient) PublishSnapshot(stream, tok, blob string) Output {
	return output(c.do(http.MethodPut, c.extURL(stream)+"/snapshot/"+url.PathEscape(tok),
		http.Header{"Content-Type": {SnapshotType}}, []byte(blob)))
}

// SetRetention implements Client: PUT {stream}/retention/{offset}.
func (c *HTTPClient) SetRetention(stream, tok string) Output {
	return output(c.do(http.MethodPut, c.extURL(stream)+"/retention/"+url.PathEscape(tok), nil, nil))
}

// errSuperseded makes a snapshot read whose snapshot was replaced between the 307 and
// the GET an unknown (dropped) read.
var errSuperseded = errors.New("the snapshot was superseded between the redirect and the read")

// ReadSnapshot implements Client: GET {stream}/snapshot, then the 307's Location.
func (c *HTTPClient) ReadSnapshot(stream string) Output {
	nc := *c.HTTP
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.doWith(&nc, http.MethodGet, c.extURL(stream)+"/snapshot", nil, nil)
	if err != nil || resp.StatusCode != http.StatusTemporaryRedirect {
		return output(resp, err)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return Output{Error: "bad Location: " + err.Error()}
	}
	base, _ := url.Parse(c.streamURL(stream))
	resp, err = c.doWith(&nc, http.MethodGet, base.ResolveReference(loc).String(), nil, nil)
	out := output(resp, err)
	switch {
	case out.Unknown():
		return out
	case out.Status == 404:
		return Output{Error: errSuperseded.Error()}
	case out.Status == 200:
		out.Blob = partDigest(resp.Header.Get("Content-Type"), resp.Body)
	}
	return out
}

// Bootstrap implements Client: GET {stream}/bootstrap parsed with mime/multipart; JSON
// update parts get their canonical "\n" back (D3).
func (c *HTTPClient) Bootstrap(stream string) Output {
	resp, err := c.do(http.MethodGet, c.extURL(stream)+"/bootstrap", nil, nil)
	out := output(resp, err)
	if out.Unknown() || out.Status != 200 {
		return out
	}
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return Output{Error: fmt.Sprintf("bootstrap Content-Type %q", resp.Header.Get("Content-Type"))}
	}
	mr := multipart.NewReader(bytes.NewReader(resp.Body), params["boundary"])
	var data []byte
	for i := 0; ; i++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			if i == 0 {
				return Output{Error: "bootstrap without parts"}
			}
			break
		}
		if err != nil {
			return Output{Error: "bootstrap: " + err.Error()}
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return Output{Error: "bootstrap: " + err.Error()}
		}
		if i == 0 {
			out.Blob = partDigest(p.Header.Get("Content-Type"), b)
			continue
		}
		data = append(data, b...)
		if isJSONStream(stream) {
			data = append(data, '\n')
		}
		out.Msgs++
	}
	out.Len, out.Digest = uint64(len(data)), DigestOf(data)
	return out
}
