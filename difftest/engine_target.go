package difftest

import (
	"fmt"
	"strings"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// Target runs one command against an implementation and reports what it observed.
type Target interface {
	Do(cmd model.Command) Observation
}

// EngineTarget runs commands on the engine's Go API. The request syntax that httpd
// checks before calling the engine (ids, headers; A-07 step 1) is parsed here with the
// model's parsers in the same order; everything after that is the engine's decision.
type EngineTarget struct {
	E   *engine.Engine
	Now func() time.Time // the engine's clock, for Stream-Expires-At validation
}

// Do implements Target.
func (t EngineTarget) Do(cmd model.Command) Observation {
	before := t.jsonLive(cmd)
	o := t.do(cmd)
	if before || t.jsonLive(cmd) {
		o.Header[hExtensions] = extRecords // as httpd advertises (D5 amendment)
	}
	return o
}

// jsonLive reports whether cmd targets a live JSON stream.
func (t EngineTarget) jsonLive(cmd model.Command) bool {
	key, ok := model.TargetStream(cmd)
	if !ok || checkKey(key) != nil {
		return false
	}
	info, err := t.E.Head(key)
	return err == nil && info.JSON()
}

func (t EngineTarget) do(cmd model.Command) Observation {
	switch c := cmd.(type) {
	case model.CreateBucket:
		created, err := t.E.CreateBucket(c.Bucket)
		if err == nil && !created {
			err = model.ErrBucketExists
		}
		return t.result(err, func(o *Observation) { o.Status, o.Header[hLocation] = 201, "present" })
	case model.GetBucket:
		info, err := t.E.Bucket(c.Bucket)
		return t.result(err, func(o *Observation) { o.Status, o.Body = 200, bucketBody(info.ID, info.Streams) })
	case model.DeleteBucket:
		return t.result(t.E.DeleteBucket(c.Bucket), func(o *Observation) { o.Status = 204 })
	case model.CreateStream:
		return t.create(c)
	case model.AppendStream:
		return t.append(c)
	case model.ReadStream:
		return t.read(c)
	case model.HeadStream:
		if err := checkKey(c.Stream); err != nil {
			return t.result(err, nil)
		}
		info, err := t.E.Head(c.Stream)
		return t.result(err, func(o *Observation) {
			o.Status = 200
			infoHeaders(o.Header, info)
			if info.TTL != nil {
				o.Header[hTTL] = u(*info.TTL)
			}
			if info.ExpiresAt != nil {
				o.Header[hExpiresAt] = model.FormatExpiresAt(*info.ExpiresAt)
			}
			if info.Snapshot != nil {
				snapshotHeaders(o.Header, info.Snapshot)
			}
			recordBounds(o.Header, info)
		})
	case model.DeleteStream:
		if err := checkKey(c.Stream); err != nil {
			return t.result(err, nil)
		}
		return t.result(t.E.Delete(c.Stream), func(o *Observation) { o.Status = 204 })
	}
	if o, ok := t.doExtension(cmd); ok {
		return o
	}
	panic(fmt.Sprintf("difftest: unknown command %T", cmd))
}

// result builds an Observation: the error's code and headers, or ok's success fields.
func (t EngineTarget) result(err error, ok func(*Observation)) Observation {
	o := Observation{Header: map[string]string{}}
	if err != nil {
		o.Code = model.ErrorCode(err)
		if o.Code == "" {
			o.Code = "INTERNAL: " + err.Error()
		}
		errorHeaders(o.Header, err)
		return o
	}
	ok(&o)
	return o
}

func infoHeaders(h map[string]string, info engine.StreamInfo) {
	h[hContentType] = info.ContentType
	h[hNext] = info.Tail.String()
	if info.Closed {
		h[hClosed] = "true"
	}
}

func checkKey(k model.StreamKey) error {
	if err := model.CheckBucketID(k.Bucket); err != nil {
		return err
	}
	return model.CheckStreamID(k.Bucket, k.Stream)
}

func (t EngineTarget) create(c model.CreateStream) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	req, err := parseCreate(c, t.Now())
	if err != nil {
		return t.result(err, nil)
	}
	res, err := t.E.Create(c.Stream, req)
	return t.result(err, func(o *Observation) {
		o.Status = 200
		if res.Created {
			o.Status, o.Header[hLocation] = 201, "present"
		}
		infoHeaders(o.Header, res.Info)
		recordAck(o.Header, res.Info.JSON(), res.RecordStart, res.RecordNext)
	})
}

// parseCreate mirrors httpd's PUT header parsing (B-5.1, A-10..13).
func parseCreate(c model.CreateStream, now time.Time) (engine.CreateRequest, error) {
	var req engine.CreateRequest
	if c.ContentType != nil && *c.ContentType != "" {
		mt, err := model.MediaType(*c.ContentType)
		if err != nil {
			return req, err
		}
		req.ContentType, req.MediaType = *c.ContentType, mt
	}
	if c.TTL != nil && c.ExpiresAt != nil {
		return req, model.ErrTTLAndExpiresAt
	}
	if c.TTL != nil {
		v, err := model.ParseTTL(*c.TTL)
		if err != nil {
			return req, err
		}
		req.TTL = &v
	}
	if c.ExpiresAt != nil {
		v, err := model.ParseExpiresAt(*c.ExpiresAt, now)
		if err != nil {
			return req, err
		}
		req.ExpiresAt = &v
	}
	req.Closed = c.Closed != nil && model.StreamClosedHeader(*c.Closed)
	if c.Attrs != nil {
		a, err := model.NormalizeAttrs([]byte(*c.Attrs))
		if err != nil {
			return req, err
		}
		req.Attrs = a
	}
	req.Body = c.Body
	f, err := parseFork(c)
	req.Fork = f
	return req, err
}

// parseFork mirrors httpd's fork header parsing (B-4.2-01..03, B-4.2-13, A-23).
func parseFork(c model.CreateStream) (*engine.ForkRequest, error) {
	if c.ForkedFrom == nil {
		if c.ForkOffset != nil || c.ForkSubOffset != nil {
			return nil, model.ErrBadForkRequest
		}
		return nil, nil
	}
	src, ok := model.ParseForkSource(*c.ForkedFrom)
	if !ok || src.Bucket != c.Stream.Bucket {
		return nil, model.ErrBadForkRequest
	}
	f := &engine.ForkRequest{Source: src, SourcePath: *c.ForkedFrom}
	if c.ForkOffset != nil {
		o, err := model.ParseOffset(strings.TrimSpace(*c.ForkOffset))
		if err != nil {
			return nil, model.ErrBadForkRequest
		}
		f.Offset = &o
	}
	if c.ForkSubOffset != nil {
		n, ok := model.ParseSubOffset(*c.ForkSubOffset)
		if !ok || (n > 0 && c.ForkOffset == nil) {
			return nil, model.ErrBadForkRequest
		}
		f.SubOffset = n
	}
	return f, nil
}

func (t EngineTarget) append(c model.AppendStream) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	req, err := parseAppend(c)
	if err != nil {
		return t.result(err, nil)
	}
	res, err := t.E.Append(c.Stream, req)
	return t.result(err, func(o *Observation) {
		o.Status = 204
		if res.Outcome == engine.Appended && req.Producer != nil {
			o.Status = 200
		}
		o.Header[hNext] = res.Tail.String()
		if res.Closed {
			o.Header[hClosed] = "true"
		}
		if res.ProducerAck {
			o.Header[hEpoch], o.Header[hSeq] = u(res.ProducerEpoch), u(res.ProducerSeq)
		}
		recordAck(o.Header, res.JSON, res.RecordStart, res.RecordNext)
	})
}

// parseAppend mirrors httpd's POST header parsing, A-07 step 1 in order.
func parseAppend(c model.AppendStream) (engine.AppendRequest, error) {
	req := engine.AppendRequest{Body: c.Body, Close: c.Closed != nil && model.StreamClosedHeader(*c.Closed)}
	p, err := model.ParseProducer(deref(c.ProducerID), deref(c.ProducerEpoch), deref(c.ProducerSeq),
		c.ProducerID != nil, c.ProducerEpoch != nil, c.ProducerSeq != nil)
	if err != nil {
		return req, err
	}
	req.Producer = p
	if len(c.Body) == 0 && !req.Close {
		return req, model.ErrEmptyBody
	}
	if len(c.Body) > 0 {
		if c.ContentType == nil || *c.ContentType == "" {
			return req, model.ErrMissingContentType
		}
		if req.MediaType, err = model.MediaType(*c.ContentType); err != nil {
			return req, err
		}
	}
	if c.StreamSeq != nil {
		if *c.StreamSeq == "" {
			return req, model.ErrBadStreamSeq
		}
		req.StreamSeq = c.StreamSeq
	}
	if c.RecordMatch != nil {
		n, ok := model.ParseRecordOrdinal(*c.RecordMatch)
		if !ok {
			return req, model.ErrBadRecord
		}
		req.RecordMatch = &n
	}
	return req, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (t EngineTarget) read(c model.ReadStream) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	spec := model.OffsetSpec{Kind: model.SpecStart}
	if c.Offset != nil {
		var err error
		if spec, err = model.ParseOffsetSpec(*c.Offset); err != nil {
			return t.result(err, nil)
		}
	}
	rq, err := recordRequest(c)
	if err != nil {
		return t.result(err, nil)
	}
	req := engine.ReadRequest{From: spec}
	if rq != nil {
		req = rq.req
	}
	res, err := t.E.Read(c.Stream, req)
	return t.result(err, func(o *Observation) {
		o.Status = 200
		o.Header[hContentType] = res.Info.ContentType
		o.Header[hNext] = res.Next.String()
		if res.UpToDate {
			o.Header[hUpToDate] = "true"
		}
		if res.EOF {
			o.Header[hClosed] = "true"
		}
		o.Body = string(res.Data)
		switch {
		case rq != nil:
			rq.render(o, res)
		case res.Info.JSON():
			o.Body = string(model.JSONArrayFromCanonical(nil, res.Data))
			o.Header[hExtensions] = extRecords
		}
	})
}
