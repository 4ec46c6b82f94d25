package difftest

import (
	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// doExtension runs the extension commands on the engine: attributes and append-batch
// (extension §4, §5). The request syntax httpd checks first is checked here the same
// way, with the model's vocabulary and httpd's frame parser.
func (t EngineTarget) doExtension(cmd model.Command) (Observation, bool) {
	switch c := cmd.(type) {
	case model.GetAttrs:
		if err := checkKey(c.Stream); err != nil {
			return t.result(err, nil), true
		}
		attrs, err := t.E.Attrs(c.Stream)
		return t.result(err, func(o *Observation) {
			o.Status, o.Header[hContentType], o.Body = 200, "application/json", string(attrs)
			if attrs == nil {
				o.Body = "{}"
			}
			t.advertise(o, c.Stream)
		}), true
	case model.PutAttrs:
		return t.putAttrs(c), true
	case model.AppendBatch:
		return t.appendBatch(c), true
	case model.PublishSnapshot:
		return t.publishSnapshot(c), true
	case model.GetSnapshot:
		return t.getSnapshot(c), true
	case model.DeleteSnapshot:
		if err := checkKey(c.Stream); err != nil {
			return t.result(err, nil), true
		}
		o, err := model.ParseOffset(c.Offset)
		if err != nil {
			return t.result(err, nil), true
		}
		return t.result(t.E.DeleteSnapshot(c.Stream, o), func(o *Observation) { o.Status = 204 }), true
	case model.SetRetention:
		return t.setRetention(c), true
	case model.Bootstrap:
		return t.bootstrap(c), true
	}
	return Observation{}, false
}

func (t EngineTarget) putAttrs(c model.PutAttrs) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	if c.ContentType == nil || *c.ContentType == "" {
		return t.result(model.ErrMissingContentType, nil)
	}
	if mt, err := model.MediaType(*c.ContentType); err != nil || !model.IsJSON(mt) {
		return t.result(model.ErrBadAttrs, nil)
	}
	if len(c.Body) > model.MaxAttrsRequestBytes {
		return t.result(model.ErrTooLarge, nil)
	}
	attrs, err := model.NormalizeAttrs(c.Body)
	if err != nil {
		return t.result(err, nil)
	}
	return t.result(t.E.SetAttrs(c.Stream, attrs), func(o *Observation) {
		o.Status = 204
		t.advertise(o, c.Stream)
	})
}

func (t EngineTarget) appendBatch(c model.AppendBatch) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	for _, v := range []*string{c.ProducerID, c.ProducerEpoch, c.ProducerSeq, c.StreamSeq, c.Closed, c.RecordMatch} {
		if v != nil {
			return t.result(model.ErrBadBatch, nil)
		}
	}
	if c.ContentType == nil || *c.ContentType == "" {
		return t.result(model.ErrMissingContentType, nil)
	}
	mt, err := model.MediaType(*c.ContentType)
	if err != nil {
		return t.result(err, nil)
	}
	frames, err := httpd.ParseFrames(c.Body)
	if err != nil {
		return t.result(err, nil)
	}
	acks, isJSON, err := t.E.AppendBatch(c.Stream, mt, frames)
	return t.result(err, func(o *Observation) {
		o.Status, o.Header[hContentType] = 200, "application/json"
		if isJSON {
			o.Header[hExtensions] = extRecords
		}
		for _, a := range acks {
			o.Acks = append(o.Acks, ackFromEngine(a, isJSON))
		}
	})
}

// advertise adds Stream-Extensions when the stream is a JSON stream, as httpd does after
// an operation whose result does not carry the stream's metadata (D5).
func (t EngineTarget) advertise(o *Observation, k model.StreamKey) {
	if info, err := t.E.Head(k); err == nil && info.JSON() {
		o.Header[hExtensions] = extRecords
	}
}

// recordBounds adds Stream-Extensions, -Record-First and -Record-Next of a JSON stream
// (extension §6.5, §6.10).
func recordBounds(h map[string]string, info engine.StreamInfo) {
	if info.JSON() {
		h[hExtensions], h[hRecFirst], h[hRecNext] = extRecords, u(info.RecordFirst), u(info.RecordNext)
	}
}

// recordAck adds Stream-Extensions and a record range (extension §6.3).
func recordAck(h map[string]string, isJSON bool, start, next uint64) {
	if isJSON {
		h[hExtensions], h[hRecStart], h[hRecNext] = extRecords, u(start), u(next)
	}
}
