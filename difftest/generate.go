package difftest

import (
	"strconv"
	"strings"
	"time"

	"github.com/dsd-project/dsd/model"
)

// GenConfig shapes generated scripts.
type GenConfig struct {
	Steps int          // maximum number of steps
	Model model.Config // the model configuration the generator plans with
	Start time.Time    // the clock at the first step
}

// Generate builds a script from src. It runs the model alongside, so reads mostly ask
// for real message boundaries (and their neighbours), appends mostly carry the stream's
// own Content-Type, and producers mostly send the next sequence number (or a retry, a
// gap, a stale or a new epoch). It stops after cfg.Steps steps or when src is done.
//
// Expires-At values are either at least 2 s ahead of the script's clock or in 2001, so
// that a server validating them against the wall clock agrees with the script's clock
// as long as that clock runs ahead of the wall clock (see DefaultStart).
func Generate(src Source, cfg GenConfig) Script {
	g := &generator{src: src, s: model.NewState(cfg.Model), now: cfg.Start,
		prod: map[string]prodGuess{}}
	g.emit(model.CreateBucket{Bucket: buckets[0]})
	g.jsonFocus = g.chance(25)
	for len(g.script) < cfg.Steps && !src.Done() {
		g.step()
	}
	return g.script
}

// DefaultStart is a script start time safely ahead of the wall clock (one hour), so
// that every Expires-At the generator writes as "future" is also in the future for a
// server that checks it against time.Now.
func DefaultStart() time.Time { return time.Now().Add(time.Hour).Truncate(time.Second) }

var (
	buckets = []string{"bkt0", "bkt1", "BAD"}
	streams = []string{"s0", "s1", "s2", "x y", "ü", "", "a/b", "a..b", strings.Repeat("l", 100)}
	types   = []string{"text/plain", "application/json", "application/octet-stream",
		"TEXT/plain; charset=utf-8", "application/json; charset=utf-8"}
	badTypes = []string{"", "bogus", "text/", "application/json;;"}
	jsonDocs = []string{`1`, `"s"`, `{"a":1}`, `[1,2]`, `[[1],[2,3]]`, `[]`, ` [{"k" : "v"}, 2] `,
		`{"x":[1, 2]}`, `null`, `[[]]`, `{`, `[1,`, `tru`, "\"\xff\"", `1 2`, ``}
	durations = []time.Duration{0, time.Millisecond, 500 * time.Millisecond, time.Second,
		2 * time.Second, 5 * time.Second, 11 * time.Second, 61 * time.Second}
)

type generator struct {
	src    Source
	s      model.State
	now    time.Time
	script Script
	prod   map[string]prodGuess // by stream key + producer id: last acknowledged state
	forks  []model.CreateStream // fork requests made so far, to repeat (B-4.2-07)
	// jsonFocus makes (most) new streams application/json: a quarter of the scripts
	// dwell on record coordinates (extension §6).
	jsonFocus bool
}

type prodGuess struct{ epoch, seq uint64 }

func (g *generator) pick(n int) int { return g.src.Intn(n) }

func (g *generator) chance(pct int) bool { return g.pick(100) < pct }

func oneOf[T any](g *generator, xs []T) T { return xs[g.pick(len(xs))] }

// emit appends a command to the script and applies it to the planning model.
func (g *generator) emit(c model.Command) {
	g.script = append(g.script, c)
	if t, ok := c.(Tick); ok {
		g.now = g.now.Add(t.D)
		return
	}
	var res model.Result
	g.s, res = g.s.Apply(c, g.now)
	if a, ok := c.(model.AppendStream); ok && res.Producer != nil && res.Status < 300 && a.ProducerID != nil {
		g.prod[a.Stream.String()+"\x00"+*a.ProducerID] = prodGuess{res.Producer.Epoch, res.Producer.Seq}
	}
}

func (g *generator) step() {
	if g.liveStreams() < 2 && g.chance(40) {
		g.emit(g.create())
		return
	}
	switch r := g.pick(100); {
	case r < 4:
		g.emit(Tick{D: oneOf(g, durations)})
	case r < 6:
		g.emit(model.CreateBucket{Bucket: g.bucket()})
	case r < 8:
		g.emit(model.GetBucket{Bucket: g.bucket()})
	case r < 9:
		g.emit(model.DeleteBucket{Bucket: g.bucket()})
	case r < 19:
		g.emit(g.create())
	case r < 48:
		g.emit(g.append())
	case r < 61:
		g.emit(g.read())
	case r < 66:
		g.emit(model.HeadStream{Stream: g.key()})
	case r < 70:
		g.emit(model.DeleteStream{Stream: g.key()})
	default:
		g.emit(g.extension())
	}
}

func (g *generator) liveStreams() int {
	n := 0
	for _, k := range g.s.Streams() {
		if _, ok := g.s.Stream(k, g.now); ok {
			n++
		}
	}
	return n
}

func (g *generator) bucket() string {
	if g.chance(90) {
		return buckets[0]
	}
	return oneOf(g, buckets)
}

// key names a stream: mostly one of three ordinary names in the first bucket, and one
// that exists at the moment when there is one.
func (g *generator) key() model.StreamKey {
	k := model.StreamKey{Bucket: g.bucket(), Stream: streams[g.pick(3)]}
	if _, ok := g.s.Stream(k, g.now); !ok && g.chance(70) {
		for _, e := range g.s.Streams() {
			if _, live := g.s.Stream(e, g.now); live && g.chance(60) {
				return e
			}
		}
	}
	if g.chance(6) {
		k.Stream = oneOf(g, streams)
	}
	return k
}

// contentType is mostly a valid type, sometimes absent or malformed.
func (g *generator) contentType() string {
	if g.chance(8) {
		return oneOf(g, badTypes)
	}
	return oneOf(g, types)
}

func (g *generator) create() model.CreateStream {
	c := model.CreateStream{Stream: g.key()}
	if v, ok := g.s.Stream(c.Stream, g.now); ok && g.chance(50) {
		c.ContentType = model.Str(v.ContentType) // most re-PUTs match
	} else if ct := g.contentType(); ct != "" || g.chance(50) {
		c.ContentType = model.Str(ct)
	}
	if g.jsonFocus && g.chance(85) {
		c.ContentType = model.Str("application/json")
	}
	switch r := g.pick(100); {
	case r < 12:
		c.TTL = model.Str(oneOf(g, []string{"0", "1", "3", "10", "60", "abc", "01", ""}))
	case r < 20:
		c.ExpiresAt = model.Str(g.expiresAt())
	case r < 22:
		c.TTL, c.ExpiresAt = model.Str("10"), model.Str(g.expiresAt())
	}
	if g.chance(12) {
		c.Closed = model.Str(oneOf(g, []string{"true", "TRUE", " true ", "false", "yes", ""}))
	}
	if g.chance(50) {
		c.Body = g.body(deref(c.ContentType))
	}
	if g.chance(20) {
		c.Attrs = model.Str(g.attrsDoc(c.Stream))
	}
	if g.chance(22) {
		return g.fork(c)
	}
	return c
}

func (g *generator) expiresAt() string {
	switch g.pick(5) {
	case 0:
		return "2001-01-01T00:00:00Z"
	case 1:
		return "not-a-timestamp"
	case 2:
		return g.now.Add(2 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	case 3:
		return g.now.Add(10 * time.Second).In(time.FixedZone("", 5400)).Format(time.RFC3339)
	}
	return g.now.Add(time.Hour).UTC().Format(time.RFC3339Nano)
}

// body returns a body suited to a media type (most of the time).
func (g *generator) body(ct string) []byte {
	mt, _ := model.MediaType(ct)
	if model.IsJSON(mt) || g.chance(10) {
		return []byte(oneOf(g, jsonDocs))
	}
	n := 1 + g.pick(12)
	if g.chance(3) {
		n = 0
	}
	if g.chance(10) {
		n = 20 + g.pick(40)
	}
	alphabet := "abcxyz \n\r"
	if mt == "application/octet-stream" {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(g.pick(256))
		}
		return b
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.pick(len(alphabet))]
	}
	if g.chance(15) { // a code point split across appends: SSE holds it back (D9)
		b = append([]byte(oneOf(g, []string{"\xa9", "\x82\xac", "\xac", ""})), b...)
		b = append(b, oneOf(g, []string{"\xc3", "\xe2", "\xe2\x82", "\xff"})...)
	}
	return b
}

func (g *generator) append() model.AppendStream {
	c := model.AppendStream{Stream: g.key()}
	v, exists := g.s.Stream(c.Stream, g.now)
	ct := g.contentType()
	if exists && g.chance(88) {
		ct = v.ContentType
	}
	if ct != "" || g.chance(30) {
		c.ContentType = model.Str(ct)
	}
	closeOnly := exists && v.Closed && g.chance(20) // retries and foreign tuples (D9)
	if !closeOnly && !g.chance(4) {
		c.Body = g.body(ct)
	}
	if closeOnly || g.chance(8) {
		c.Closed = model.Str(oneOf(g, []string{"true", "true", "True", "false", "1"}))
	}
	if g.chance(40) || (exists && model.IsJSON(v.MediaType) && g.chance(25)) {
		g.producer(&c)
	}
	if g.chance(15) {
		c.StreamSeq = model.Str(oneOf(g, []string{"1", "2", "3", "10", "09", "a", "B", "zz", ""}))
	}
	if g.chance(12) {
		c.RecordMatch = model.Str(g.recordMatch(v, exists))
	}
	return c
}

// producer adds producer headers: mostly the producer's next seq, sometimes a retry, a
// gap, a new or stale epoch, or malformed headers.
func (g *generator) producer(c *model.AppendStream) {
	id := oneOf(g, []string{"p0", "p1"})
	p, known := g.prod[c.Stream.String()+"\x00"+id]
	epoch, seq := p.epoch, p.seq+1
	if !known {
		seq = 0
	}
	switch g.pick(17) {
	case 0, 1:
		seq = p.seq // retry
	case 14, 15, 16:
		seq = p.seq - min(p.seq, uint64(1+g.pick(3))) // retry of an older seq
	case 2:
		seq = p.seq + 2 // gap
	case 3, 4:
		epoch, seq = p.epoch+1, 0 // epoch claim
	case 5:
		epoch, seq = p.epoch+1, 1 // bad epoch claim
	case 6, 7:
		if epoch > 0 {
			epoch-- // zombie
		} else {
			seq = 0
		}
	case 8:
		c.ProducerID, c.ProducerEpoch = model.Str(oneOf(g, []string{id, ""})), model.Str("0")
		if g.chance(50) {
			c.ProducerSeq = model.Str(oneOf(g, []string{"1abc", "-1", "1e3", "9007199254740992", "007"}))
		}
		return
	}
	c.ProducerID = model.Str(id)
	c.ProducerEpoch = model.Str(strconv.FormatUint(epoch, 10))
	c.ProducerSeq = model.Str(strconv.FormatUint(seq, 10))
}

func (g *generator) read() model.ReadStream {
	c := model.ReadStream{Stream: g.key()}
	v, exists := g.s.Stream(c.Stream, g.now)
	if (exists && model.IsJSON(v.MediaType) && (g.chance(40) || (v.RecordFirst > 0 && g.chance(50)))) || g.chance(4) {
		return g.recordRead(c, v, exists)
	}
	switch r := g.pick(100); {
	case r < 10:
	case r < 25:
		c.Offset = model.Str("-1")
	case r < 33:
		c.Offset = model.Str("now")
	case r < 92 && exists:
		o := v.Boundaries[g.pick(len(v.Boundaries))]
		switch g.pick(9) {
		case 0:
			o++
		case 1:
			o = v.Tail + 1
		case 2, 3:
			o = g.below(v, v.Retained)
		case 4:
			o = max(o, 1) - 1 // the held position when a message ends inside a code point
		}
		c.Offset = model.Str(o.String())
	default:
		c.Offset = model.Str(oneOf(g, []string{"", "abc", "0", "-2", "0000000000000001_0000000000000000",
			"0000000000000000_000000000000000x", "9999999999999999_9999999999999999", "now "}))
	}
	return c
}
