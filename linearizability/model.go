package linearizability

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/dsd-project/dsd/model"
)

// State is the model's state of one stream (one porcupine partition). It is a small
// comparable value: the content is summarized as (Len, Digest), offsets are opaque
// tokens, and the producer table is a canonical string.
type State struct {
	Exists bool
	Closed bool
	// Tail is an offset token of the tail. When TailExact it is the current tail's token;
	// otherwise an append whose acknowledgement was lost has moved the tail past it and
	// Tail is a strict lower bound.
	Tail      string
	TailExact bool
	Len       uint64
	Digest    Digest
	StreamSeq string // last Stream-Seq recorded; "" none (an empty Stream-Seq is a 400)
	Closer    string // the producer triple that closed the stream, encoded; "" none
	Producers string // "id epoch seq" entries sorted by id, joined by "\n"

	// StartTok is the token of position 0: the Stream-Next-Offset of the 201 that
	// created the (empty) stream; "" when unknown.
	StartTok string
	// The snapshot register (extension §2): the visible snapshot's offset token (""
	// none), the length and digest of the content before it, and the D5 digest of its
	// blob.
	SnapTok    string
	SnapLen    uint64
	SnapDigest Digest
	SnapBlob   string
	// The retention register (extension §2.2): the boundary's token ("" while it is the
	// start) and the length and digest of the content before it. A read from -1 returns
	// the content after it.
	RetTok    string
	RetLen    uint64
	RetDigest Digest

	// Record coordinates of a JSON stream (extension §6.1): Recs is N, RetRecs is F (the
	// ordinal at the retention boundary), SnapRecs the ordinal at the visible snapshot.
	// Ordinals are counted, never named by the server's offsets: every check ties a
	// reported ordinal to these counters, so ordinals are contiguous and never reused,
	// and N - F is the number of retained messages (§6.13).
	Recs     uint64
	RetRecs  uint64
	SnapRecs uint64

	// SoftDeleted: deleted while a fork references it (B-4.2-10); the content stays (the
	// fork reads it) and every request answers 410, PUT 409.
	SoftDeleted bool
}

// Model is the porcupine model of a set of streams, partitioned by stream: each stream's
// history is checked on its own (porcupine's kv habit). Step never mutates its argument.
//
// The rules are the base protocol's, from model/ where they are shared (producer
// admission, Stream-Seq order), and they assume the workload's fixed create
// configuration. Offsets are opaque: the model only requires, per B-8-01, that every
// token acknowledging an append sorts strictly after every earlier one and that the same
// tail reads back as the same token; a refusal (400, 403, 409, 412) that reports an offset
// must report the tail's.
//
// Unknown outcomes (Output.Status == 0) are data: such a write is given Return =
// math.MaxInt64 by the history (etcd's habit), and Step applies it when it is
// admissible. Placing it last in a linearization then stands for "it never happened",
// so one deterministic step covers both possibilities without a power-set model.
var Model = porcupine.Model{
	Partition: partition,
	Init:      func() any { return State{} },
	Step: func(state, input, output any) (bool, any) {
		return Step(state.(State), input.(Input), output.(Output))
	},
	Equal: func(a, b any) bool { return a.(State) == b.(State) },
	Hash:  func(s any) uint64 { return s.(State).hash() },
	DescribeOperation: func(input, output any) string {
		return input.(Input).String() + " → " + output.(Output).String()
	},
	DescribeState: func(s any) string { return s.(State).String() },
	DescribeOperationMetadata: func(info any) string {
		if info == nil {
			return ""
		}
		return fmt.Sprint(info)
	},
}

func partition(ops []porcupine.Operation) [][]porcupine.Operation {
	by := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range ops {
		k := op.Input.(Input).Stream
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], op)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out
}

// Step is the sequential specification: whether out is a possible response to in from
// state s, and the state after it.
func Step(s State, in Input, out Output) (bool, State) {
	if s.SoftDeleted {
		return stepGone(s, in, out)
	}
	switch in.Kind {
	case OpCreate:
		return stepCreate(s, in, out)
	case OpAppend:
		return stepAppend(s, in, out)
	case OpBatch:
		return stepBatch(s, in, out)
	case OpRead:
		if out.Unknown() {
			return true, s
		}
		if !s.Exists {
			return out.Status == 404, s
		}
		n, d := s.retained()
		if out.Status != 200 || out.Len != n || out.Digest != d || out.Closed != s.Closed {
			return false, s
		}
		if (s.RetLen > 0) != (out.Retained != "") || (out.Retained != "" && out.Retained != s.RetTok) {
			return false, s // D2: -1 is 410 naming the retained start once retention has advanced
		}
		if isJSONStream(in.Stream) && out.Msgs != s.Recs-s.RetRecs { // §6.13: N - F retained messages
			return false, s
		}
		return s.atTail(out.Offset)
	case OpHead:
		if out.Unknown() {
			return true, s
		}
		if !s.Exists {
			return out.Status == 404, s
		}
		if out.Status != 200 || out.Closed != s.Closed || out.SnapOffset != s.SnapTok {
			return false, s
		}
		if isJSONStream(in.Stream) && !(isU(out.RecFirst, s.RetRecs) && isU(out.RecNext, s.Recs)) {
			return false, s // §6.5: F and N on HEAD
		}
		return s.atTail(out.Offset)
	case OpSnapshot:
		return stepSnapshot(s, in, out)
	case OpRetain:
		return stepRetain(s, in, out)
	case OpSnapRead:
		return stepSnapRead(s, out)
	case OpBootstrap:
		return stepBootstrap(s, in, out)
	case OpRecordRead:
		return stepRecordRead(s, in, out)
	case OpFork:
		return stepFork(s, in, out)
	case OpDelete:
		return stepDelete(s, in, out)
	}
	return false, s
}

// retained is the length and digest of what a read from -1 returns: the content after
// the retention boundary (extension §2.2, B-8-03).
func (s State) retained() (uint64, Digest) {
	return s.Len - s.RetLen, s.Digest.Suffix(s.Len, s.RetDigest, s.RetLen)
}

// stepCreate: 201 for a new stream, 200 for an existing open one with the same
// configuration, 409 once it is closed (the workload never re-creates closed)
// (B-5.1-01, B-5.1-02). Every success carries the tail (B-5.1-13); on a JSON stream
// the empty record range at N (extension §6.3: the workload creates empty streams).
func stepCreate(s State, in Input, out Output) (bool, State) {
	if isJSONStream(in.Stream) && !out.Unknown() && out.Status < 300 && !(isU(out.RecStart, s.Recs) && isU(out.RecNext, s.Recs)) {
		return false, s
	}
	switch {
	case out.Unknown():
		if !s.Exists {
			return true, State{Exists: true}
		}
		return true, s
	case !s.Exists:
		return out.Status == 201 && out.Offset != "", State{Exists: true, Tail: out.Offset, TailExact: true,
			StartTok: out.Offset}
	case s.Closed:
		return s.refused(out.Status == 409, out)
	case out.Status != 200 || out.Closed: // the stream is open: no Stream-Closed (B-5.1-02)
		return false, s
	}
	return s.atTail(out.Offset)
}

// stepAppend follows A-07 from step 2 (the workload never sends malformed requests or
// a foreign Content-Type).
func stepAppend(s State, in Input, out Output) (bool, State) {
	if out.Unknown() {
		return true, s.applyIfAdmitted(in)
	}
	if !s.Exists {
		return out.Status == 404, s
	}
	body := in.Body != ""
	if s.Closed {
		return stepClosed(s, in, out)
	}
	if p := in.Producer; p != nil {
		ps := s.producer(p.ID)
		adm, err := model.AdmitProducer(ps, model.Producer{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq})
		switch e := err.(type) {
		case nil:
		case *model.StaleEpochError: // 403 with the current epoch (B-5.2.1-04)
			return s.refused(out.Status == 403 && (out.Epoch == nil || *out.Epoch == e.Current), out)
		case *model.SeqGapError: // 409 with expected and received (B-5.2.1-04)
			return s.refused(out.Status == 409 && !out.Closed && eqOpt(out.Expected, e.Expected) &&
				eqOpt(out.Received, e.Received), out)
		default: // a new epoch must start at seq 0: 400
			return s.refused(out.Status == 400, out)
		}
		if adm == model.AdmitDuplicate { // 204, nothing written, highest seq (B-5.2.1-03/04)
			ok := out.Status == 204 && !out.Closed && eqOpt(out.Seq, ps.LastSeq)
			if rs, rn, known := s.receipt(p.ID); known && p.Seq == ps.LastSeq && isJSONStream(in.Stream) {
				ok = ok && isU(out.RecStart, rs) && isU(out.RecNext, rn) // §6.3: the original range
			}
			return ok, s
		}
	}
	if body && in.StreamSeq != "" && model.StreamSeqRegresses(s.streamSeq(), in.StreamSeq) {
		return s.refused(out.Status == 409 && !out.Closed && out.Expected == nil, out) // B-5.2-05
	}
	if s.recordMismatch(in) { // §6.4: 412 with N and the tail
		if out.Status != 412 || !eqOpt(out.RecNext, s.Recs) {
			return false, s
		}
		return s.atTail(out.Offset)
	}
	want := 204 // B-5.2-08, B-5.2.1-08
	if in.Producer != nil && body {
		want = 200
	}
	if out.Status != want || out.Closed != in.Close {
		return false, s
	}
	if in.Producer != nil && !eqOpt(out.Seq, in.Producer.Seq) {
		return false, s
	}
	if isJSONStream(in.Stream) && !(isU(out.RecStart, s.Recs) && isU(out.RecNext, s.Recs+in.msgs)) {
		return false, s // §6.3: the next ordinals, one contiguous range
	}
	ns := s.apply(in)
	if !body {
		return ns.atTail(out.Offset) // close-only: the tail is unchanged
	}
	// B-8-01: a new offset sorts after every earlier one.
	if out.Offset == "" || (s.Tail != "" && out.Offset <= s.Tail) {
		return false, s
	}
	ns.Tail, ns.TailExact = out.Offset, true
	return true, ns
}

// stepClosed: a POST to a closed stream (A-07 step 3). Close-only: 204 with
// Stream-Closed and the final offset (B-5.3-01), without producer headers or with the
// closing tuple; with another tuple 409 with Stream-Closed and the final offset (D9). The tuple that closed it: 204, which
// B-5.2.1-09 makes a SHOULD, so a 409 is accepted too. A known producer with a stale
// epoch: 403 or 409 (B-5.2.1-09 allows either). Anything else: 409 with Stream-Closed
// and the final offset (B-5.2-07, B-5.2-10).
func stepClosed(s State, in Input, out Output) (bool, State) {
	if p := in.Producer; in.Body == "" && p != nil && s.Closer != encodeProducer(*p) {
		if out.Status != 409 || !out.Closed { // D9: another tuple's close-only is refused
			return false, s
		}
		return s.atTail(out.Offset)
	}
	if in.Body == "" {
		if out.Status != 204 || !out.Closed || !eqOpt(out.RecStart, s.Recs) || !eqOpt(out.RecNext, s.Recs) {
			return false, s
		}
		return s.atTail(out.Offset)
	}
	if p := in.Producer; p != nil {
		if s.Closer == encodeProducer(*p) && out.Status == 204 {
			return s.refused(true, out) // SHOULD; a plain 409 below is allowed too
		}
		if ps := s.producer(p.ID); ps != nil && p.Epoch < ps.Epoch && out.Status == 403 {
			return s.refused(true, out)
		}
	}
	if out.Status != 409 || !out.Closed {
		return false, s
	}
	return s.atTail(out.Offset)
}

// applyIfAdmitted is the state after in if it took effect: unchanged when the model
// would have refused it. The new tail's token is unknown.
func (s State) applyIfAdmitted(in Input) State {
	if in.Kind != OpAppend || !s.Exists || s.Closed {
		return s
	}
	if p := in.Producer; p != nil {
		adm, err := model.AdmitProducer(s.producer(p.ID), model.Producer{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq})
		if err != nil || adm == model.AdmitDuplicate {
			return s
		}
	}
	if in.Body != "" && in.StreamSeq != "" && model.StreamSeqRegresses(s.streamSeq(), in.StreamSeq) {
		return s
	}
	if s.recordMismatch(in) {
		return s
	}
	ns := s.apply(in)
	if in.Body != "" {
		ns.TailExact = false
	}
	return ns
}

// recordMismatch reports whether in carries a Stream-Record-Match other than N on a
// JSON stream (extension §6.4).
func (s State) recordMismatch(in Input) bool {
	return in.RecordMatch != nil && isJSONStream(in.Stream) && *in.RecordMatch != s.Recs
}

// isU reports whether a reported number is present and v.
func isU(p *uint64, v uint64) bool { return p != nil && *p == v }

// apply makes an admitted append's changes: content, Stream-Seq (only with data, A-06),
// producer state, closure and the closing tuple.
func (s State) apply(in Input) State {
	first := s.Recs
	if in.Body != "" {
		s.Digest = s.Digest.Extend(in.digest, in.size)
		s.Len += in.size
		if isJSONStream(in.Stream) {
			s.Recs += in.msgs
		}
		if in.StreamSeq != "" {
			s.StreamSeq = in.StreamSeq
		}
	}
	if p := in.Producer; p != nil {
		s = s.withProducer(p.ID, model.ProducerState{Epoch: p.Epoch, LastSeq: p.Seq}, first, s.Recs)
	}
	if in.Close {
		s.Closed = true
		if in.Producer != nil {
			s.Closer = encodeProducer(*in.Producer)
		}
	}
	return s
}

// refused checks a refusal (or a reply that changes nothing): ok is the verdict on its
// status and headers, and a Stream-Next-Offset it carries, when it carries one, must be
// the tail's (servers may report the tail on a 400, 403, 409 or 412; dsd sends none on
// most). Without this check the linearization could place such a token anywhere in the
// operation's window, and the offsets post-pass would then see it name a wrong position.
func (s State) refused(ok bool, out Output) (bool, State) {
	if !ok {
		return false, s
	}
	if out.Offset == "" {
		return true, s
	}
	return s.atTail(out.Offset)
}

// atTail checks a response that reports the current tail: its token must be the tail's
// (B-8-01: one token per position), or, when the tail moved unobserved, sort after the
// last one known, which then becomes the tail's token.
func (s State) atTail(tok string) (bool, State) {
	switch {
	case tok == "":
		return false, s
	case s.TailExact:
		return tok == s.Tail, s
	case s.Tail != "" && tok <= s.Tail:
		return false, s
	}
	s.Tail, s.TailExact = tok, true
	return true, s
}

func (s State) streamSeq() *string {
	if s.StreamSeq == "" {
		return nil
	}
	v := s.StreamSeq
	return &v
}

func eqOpt(p *uint64, v uint64) bool { return p == nil || *p == v }

func encodeProducer(p Producer) string { return fmt.Sprintf("%s %d %d", p.ID, p.Epoch, p.Seq) }

// producer returns the state of producer id, nil when unknown.
func (s State) producer(id string) *model.ProducerState {
	for _, line := range strings.Split(s.Producers, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == id {
			e, _ := strconv.ParseUint(f[1], 10, 64)
			q, _ := strconv.ParseUint(f[2], 10, 64)
			return &model.ProducerState{Epoch: e, LastSeq: q}
		}
	}
	return nil
}

// receipt returns the record range producer id's last accepted request was
// acknowledged with (extension §6.3).
func (s State) receipt(id string) (start, next uint64, ok bool) {
	for _, line := range strings.Split(s.Producers, "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && f[0] == id {
			start, _ = strconv.ParseUint(f[3], 10, 64)
			next, _ = strconv.ParseUint(f[4], 10, 64)
			return start, next, true
		}
	}
	return 0, 0, false
}

// withProducer returns s with producer id's state and its last record range set.
func (s State) withProducer(id string, ps model.ProducerState, recStart, recNext uint64) State {
	var lines []string
	for _, line := range strings.Split(s.Producers, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] != id {
			lines = append(lines, line)
		}
	}
	lines = append(lines, fmt.Sprintf("%s %d %d %d %d", id, ps.Epoch, ps.LastSeq, recStart, recNext))
	sort.Strings(lines)
	s.Producers = strings.Join(lines, "\n")
	return s
}

func (s State) hash() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%t%t%s%t%d%d%s\x00%s\x00%s\x00%s|%s|%d|%d|%s|%s|%d|%d|%d|%d|%d|%t", s.Exists, s.Closed,
		s.Tail, s.TailExact, s.Len, s.Digest, s.StreamSeq, s.Closer, s.Producers, s.StartTok, s.SnapTok,
		s.SnapLen, s.SnapDigest, s.SnapBlob, s.RetTok, s.RetLen, s.RetDigest, s.Recs, s.RetRecs, s.SnapRecs,
		s.SoftDeleted)
	return h.Sum64()
}

func (s State) String() string {
	if !s.Exists {
		return "absent"
	}
	tail := shortToken(s.Tail)
	if !s.TailExact {
		tail = ">" + tail
	}
	out := fmt.Sprintf("len=%d d=%x tail=%s", s.Len, uint64(s.Digest)&0xffffff, tail)
	if s.Closed {
		out += " closed"
	}
	if s.StreamSeq != "" {
		out += " seq=" + s.StreamSeq
	}
	if s.Producers != "" {
		out += " producers=[" + strings.ReplaceAll(s.Producers, "\n", "; ") + "]"
	}
	if s.SnapTok != "" {
		out += fmt.Sprintf(" snapshot@%d=%s", s.SnapLen, shortDigest(s.SnapBlob))
	}
	if s.RetLen > 0 {
		out += fmt.Sprintf(" retained@%d", s.RetLen)
	}
	if s.Recs > 0 {
		out += fmt.Sprintf(" records=[%d,%d)", s.RetRecs, s.Recs)
	}
	if s.SoftDeleted {
		out += " soft-deleted"
	}
	return out
}
