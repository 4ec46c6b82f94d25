package linearizability

import (
	"net/http"
	"net/url"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// Fork implements Client.
func (c EngineClient) Fork(stream, source, offset string) Output {
	o, err := model.ParseOffset(offset)
	if err != nil {
		return Output{Error: err.Error()}
	}
	res, err := c.Store.Create(c.key(stream), engine.CreateRequest{Fork: &engine.ForkRequest{
		Source: c.key(source), SourcePath: "/" + c.Bucket + "/" + source, Offset: &o}})
	if err != nil {
		return errorOutput(err)
	}
	out := Output{Status: 200, Offset: res.Info.Tail.String(), Closed: res.Info.Closed}
	if res.Created {
		out.Status = 201
	}
	return out
}

// Delete implements Client.
func (c EngineClient) Delete(stream string) Output {
	if err := c.Store.Delete(c.key(stream)); err != nil {
		return errorOutput(err)
	}
	return Output{Status: 204}
}

// streamPath is the source path Stream-Forked-From names: the stream's URL path on the
// client's surface (A-23, D1).
func (c *HTTPClient) streamPath(stream string) string {
	u, err := url.Parse(c.streamURL(stream))
	if err != nil {
		return ""
	}
	return u.EscapedPath()
}

// Fork implements Client: PUT with Stream-Forked-From and Stream-Fork-Offset.
func (c *HTTPClient) Fork(stream, source, offset string) Output {
	return output(c.do(http.MethodPut, c.streamURL(stream), http.Header{
		"Stream-Forked-From": {c.streamPath(source)}, "Stream-Fork-Offset": {offset}}, nil))
}

// Delete implements Client.
func (c *HTTPClient) Delete(stream string) Output {
	return output(c.do(http.MethodDelete, c.streamURL(stream), nil, nil))
}
