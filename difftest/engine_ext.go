package difftest

import (
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
	return t.result(t.E.SetAttrs(c.Stream, attrs), func(o *Observation) { o.Status = 204 })
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
	acks, _, err := t.E.AppendBatch(c.Stream, mt, frames)
	return t.result(err, func(o *Observation) {
		o.Status, o.Header[hContentType] = 200, "application/json"
		for _, a := range acks {
			o.Acks = append(o.Acks, ackFromEngine(a))
		}
	})
}
