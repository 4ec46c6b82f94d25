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
	}
	return "", "", nil, nil, false
}

// extensionObservation reads the body of a 2xx extension response into o.
func extensionObservation(cmd model.Command, o *Observation, body []byte) {
	switch cmd.(type) {
	case model.GetAttrs:
		o.Body = string(body)
	case model.PutAttrs:
		delete(o.Header, hContentType)
	case model.AppendBatch:
		acks, err := acksFromHTTP(body)
		if err != nil {
			o.Body = "UNPARSED: " + err.Error() + ": " + string(body)
			return
		}
		o.Acks = acks
	}
}
