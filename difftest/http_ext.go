package difftest

import (
	"net/http"
	"net/url"

	"github.com/dsd-project/dsd/model"
)

// extensionRequest renders the extension commands as HTTP requests on the bucketed
// surface (D1): {stream}/attrs, {stream}/append-batch.
func extensionRequest(cmd model.Command, set func(string, *string)) (method, path string, query url.Values, body []byte, ok bool) {
	switch c := cmd.(type) {
	case model.GetAttrs:
		return http.MethodGet, streamPath(c.Stream) + "/attrs", nil, nil, true
	case model.PutAttrs:
		set("Content-Type", c.ContentType)
		return http.MethodPut, streamPath(c.Stream) + "/attrs", nil, c.Body, true
	case model.AppendBatch:
		set("Content-Type", c.ContentType)
		set("Producer-Id", c.ProducerID)
		set("Producer-Epoch", c.ProducerEpoch)
		set("Producer-Seq", c.ProducerSeq)
		set("Stream-Seq", c.StreamSeq)
		set("Stream-Closed", c.Closed)
		set("Stream-Record-Match", c.RecordMatch)
		return http.MethodPost, streamPath(c.Stream) + "/append-batch", nil, c.Body, true
	case model.PublishSnapshot:
		set("Content-Type", c.ContentType)
		set("Stream-Snapshot-Match", c.Match)
		p, q := positionPath(c.Stream, "/snapshot", c.Offset, c.Record)
		return http.MethodPut, p, q, c.Body, true
	case model.GetSnapshot:
		p, q := positionPath(c.Stream, "/snapshot", c.Offset, nil)
		return http.MethodGet, p, q, nil, true
	case model.DeleteSnapshot:
		p, q := positionPath(c.Stream, "/snapshot", &c.Offset, nil)
		return http.MethodDelete, p, q, nil, true
	case model.SetRetention:
		p, q := positionPath(c.Stream, "/retention", c.Offset, c.Record)
		return http.MethodPut, p, q, nil, true
	case model.Bootstrap:
		var q url.Values
		if c.Live != nil {
			q = url.Values{"live": {*c.Live}}
		}
		return http.MethodGet, streamPath(c.Stream) + "/bootstrap", q, nil, true
	}
	return "", "", nil, nil, false
}

// positionPath is {stream}{sub}/{offset} (the offset escaped as a path segment,
// extension §8), or {stream}{sub}?record=N.
func positionPath(k model.StreamKey, sub string, offset, record *string) (string, url.Values) {
	p := streamPath(k) + sub
	if offset != nil {
		p += "/" + url.PathEscape(*offset)
	}
	if record != nil {
		return p, url.Values{"record": {*record}}
	}
	return p, nil
}

// extensionObservation reads the body of a 2xx extension response into o.
func extensionObservation(cmd model.Command, o *Observation, body []byte) {
	switch cmd.(type) {
	case model.GetAttrs:
		o.Body = string(body)
	case model.PutAttrs, model.PublishSnapshot, model.DeleteSnapshot, model.SetRetention:
		delete(o.Header, hContentType)
	case model.GetSnapshot:
		o.Body = string(body)
		if o.Status == http.StatusTemporaryRedirect {
			delete(o.Header, hContentType)
			o.Body = ""
		}
	case model.Bootstrap:
		mt, parts, err := partsFromHTTP(o.Header[hContentType], body)
		if err != nil {
			o.Body = "UNPARSED: " + err.Error()
		}
		o.Header[hContentType], o.Parts = mt, parts
	case model.AppendBatch:
		acks, err := acksFromHTTP(body)
		if err != nil {
			o.Body = "UNPARSED: " + err.Error() + ": " + string(body)
			return
		}
		o.Acks = acks
	}
}
