package difftest

import (
	"strings"

	"github.com/dsd-project/dsd/model"
)

// extension emits one request of the extensions.
func (g *generator) extension() model.Command {
	switch r := g.pick(100); {
	case r < 5:
		return model.GetAttrs{Stream: g.key()}
	case r < 12:
		return g.putAttrs()
	case r < 25:
		return g.batch()
	case r < 45:
		return g.publishSnapshot()
	case r < 52:
		return g.getSnapshot()
	case r < 58:
		return g.deleteSnapshot()
	case r < 82:
		return g.setRetention()
	default:
		return g.bootstrap()
	}
}

// attrsDocs are attribute objects (extension §5.1): valid ones, ones that normalize
// alike (key order, unknown fields, nulls, {}), and invalid ones.
var attrsDocs = []string{
	`{}`, `{"title":"t"}`, `{"title":"t","x":1}`, `{"title":null}`, `{"x":{"y":2}}`,
	`{"metadata":{"b":1,"a":[1,2]},"title":"t"}`, `{"title":"t","metadata":{"a":[1,2],"b":1}}`,
	` { "metadata" : {} } `, `{"title":"ü\u00fc"}`, `{"metadata":null,"title":"u"}`,
	`{"title":5}`, `{"metadata":[]}`, `[]`, `null`, `{`, `{"title":"t"} x`, "{\"title\":\"\xff\"}",
	`{"title":"` + strings.Repeat("a", model.MaxAttrsBytes) + `"}`,
}

// attrsDoc is an attribute object; for an existing stream, often one that normalizes to
// its stored attributes (so that re-creates match: extension §5.2).
func (g *generator) attrsDoc(k model.StreamKey) string {
	if v, ok := g.s.Stream(k, g.now); ok && g.chance(50) {
		switch {
		case v.Attrs == nil:
			return oneOf(g, []string{`{}`, `{"other":1}`, `{"title":null}`})
		case g.chance(50):
			return string(v.Attrs)
		default:
			return `{"unknown":[1],` + string(v.Attrs[1:])
		}
	}
	return oneOf(g, attrsDocs)
}

func (g *generator) putAttrs() model.PutAttrs {
	c := model.PutAttrs{Stream: g.key()}
	switch r := g.pick(100); {
	case r < 80:
		c.ContentType = model.Str("application/json")
	case r < 88:
		c.ContentType = model.Str("Application/JSON; charset=utf-8")
	case r < 94:
		c.ContentType = model.Str(oneOf(g, []string{"text/plain", "", "bogus"}))
	}
	c.Body = []byte(g.attrsDoc(c.Stream))
	if g.chance(40) {
		c.Body = []byte(oneOf(g, []string{`{"title":"a"}`, `{"metadata":{"k":1}}`, `{"title":"b","metadata":{"j":[]}}`}))
	}
	return c
}

// batch is an append-batch request (extension §4): mostly a few well-formed frames with
// the stream's Content-Type; sometimes broken framing, too many frames, a refused
// control header, or a missing or foreign Content-Type.
func (g *generator) batch() model.AppendBatch {
	c := model.AppendBatch{Stream: g.key()}
	v, exists := g.s.Stream(c.Stream, g.now)
	ct := g.contentType()
	if exists && g.chance(85) {
		ct = v.ContentType
	}
	if ct != "" || g.chance(30) {
		c.ContentType = model.Str(ct)
	}
	n := 1 + g.pick(4)
	if g.chance(2) {
		n = model.MaxBatchFrames + g.pick(2)
	}
	for i := 0; i < n; i++ {
		f := g.body(ct)
		if len(f) == 0 {
			f = []byte("z")
		}
		if n > 8 {
			f = []byte("[1]")
		}
		c.Body = model.AppendBatchFrame(c.Body, f)
	}
	switch g.pick(40) {
	case 0:
		c.Body = nil
	case 1:
		c.Body = append(c.Body, 0, 0)
	case 2:
		c.Body = append(c.Body, 0, 0, 0, 0)
	case 3:
		c.Body = append(c.Body, 0, 0, 0, 9, 'x')
	case 4:
		h := oneOf(g, []**string{&c.ProducerID, &c.ProducerEpoch, &c.ProducerSeq, &c.StreamSeq, &c.Closed, &c.RecordMatch})
		*h = model.Str(oneOf(g, []string{"0", "true", "false", ""}))
	}
	return c
}
