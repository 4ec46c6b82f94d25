package linearizability

import (
	"errors"
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/dsd-project/dsd/model"
)

// Offsets are opaque, so linearization cannot compare them with positions. This
// post-pass checks B-8-01 directly over every (position, token) pair a run produced:
// acknowledgements and reads placed by the linearization, and live transcripts.
var (
	errOffsetNotUnique = errors.New("broke OffsetPerPosition: one position of a stream must always be named by the same offset, and one offset must name one position (B-8-01)")
	errOffsetOrder     = errors.New("broke OffsetOrder: offsets must sort in stream order (B-8-01, B-8-11)")
)

// tokenAt is one observation of an offset token at a byte position of a stream.
type tokenAt struct {
	stream string
	pos    uint64
	token  string
	source string
}

// linearizedTokens replays each partition's linearization and records the position of
// every token it reports. Duplicate producer acknowledgements are left out: which
// offset they report is a server's choice.
func linearizedTokens(lin [][]porcupine.Operation) []tokenAt {
	var out []tokenAt
	for _, ops := range lin {
		s := State{}
		for _, op := range ops {
			in, o := op.Input.(Input), op.Output.(Output)
			ok, next := Step(s, in, o)
			if !ok {
				break // not a linearization after all; the checker reports it
			}
			if o.Offset != "" && !o.Unknown() && o.Status != 404 && !s.isDuplicate(in) {
				pos := next.Len // Stream-Next-Offset is the tail, except on a snapshot read
				if in.Kind == OpSnapRead {
					pos = next.SnapLen
				}
				out = append(out, tokenAt{stream: in.Stream, pos: pos, token: o.Offset,
					source: fmt.Sprintf("%s → %s (client %d)", in, o, op.ClientId)})
			}
			if in.Kind == OpBatch && !o.Unknown() && len(o.Acks) == len(in.Frames) {
				t := s
				for i, a := range o.Acks {
					_, t = stepAppend(t, in.frame(i), a.output())
					if a.Offset != "" {
						out = append(out, tokenAt{stream: in.Stream, pos: t.Len, token: a.Offset,
							source: fmt.Sprintf("%s frame %d → %d (client %d)", in, i+1, a.Status, op.ClientId)})
					}
				}
			}
			if o.SnapOffset != "" && o.SnapOffset != "-1" && o.Status < 300 && !o.Unknown() {
				out = append(out, tokenAt{stream: in.Stream, pos: next.SnapLen, token: o.SnapOffset,
					source: fmt.Sprintf("%s → %s (client %d)", in, o, op.ClientId)})
			}
			s = next
		}
	}
	return out
}

// transcriptTokens records the position of every offset a live reader was given.
func transcriptTokens(ts []Transcript) []tokenAt {
	var out []tokenAt
	for ti, t := range ts {
		pos := t.positions()
		for i, ev := range t.Events {
			if ev.Next != "" {
				out = append(out, tokenAt{stream: t.Stream, pos: pos[i], token: ev.Next,
					source: fmt.Sprintf("%s reader %d event %d", t.Mode, ti, i)})
			}
		}
	}
	return out
}

// checkOffsets verifies B-8-01 over all observations: per stream, a position has one
// token, a token one position, and tokens sort as positions do.
func checkOffsets(obs []tokenAt) []error {
	var errs []error
	byStream := map[string][]tokenAt{}
	for _, o := range obs {
		byStream[o.stream] = append(byStream[o.stream], o)
	}
	streams := make([]string, 0, len(byStream))
	for s := range byStream {
		streams = append(streams, s)
	}
	sort.Strings(streams)
	for _, s := range streams {
		list := byStream[s]
		posTok := map[uint64]tokenAt{}
		tokPos := map[string]tokenAt{}
		for _, o := range list {
			if p, ok := posTok[o.pos]; ok && p.token != o.token {
				errs = append(errs, fmt.Errorf("stream %s: %w: position %d is %q (%s) and %q (%s)", s,
					errOffsetNotUnique, o.pos, p.token, p.source, o.token, o.source))
			}
			if p, ok := tokPos[o.token]; ok && p.pos != o.pos {
				errs = append(errs, fmt.Errorf("stream %s: %w: %q names position %d (%s) and %d (%s)", s,
					errOffsetNotUnique, o.token, p.pos, p.source, o.pos, o.source))
			}
			posTok[o.pos], tokPos[o.token] = o, o
		}
		uniq := make([]tokenAt, 0, len(posTok))
		for _, o := range posTok {
			uniq = append(uniq, o)
		}
		sort.Slice(uniq, func(i, j int) bool { return uniq[i].pos < uniq[j].pos })
		for i := 0; i+1 < len(uniq); i++ {
			if uniq[i].token >= uniq[i+1].token {
				errs = append(errs, fmt.Errorf("stream %s: %w: position %d is %q but the later position %d is %q", s,
					errOffsetOrder, uniq[i].pos, uniq[i].token, uniq[i+1].pos, uniq[i+1].token))
			}
		}
		if len(errs) > 20 {
			break
		}
	}
	return errs
}

// isDuplicate reports whether s would answer in as a deduplicated producer retry.
func (s State) isDuplicate(in Input) bool {
	p := in.Producer
	if in.Kind != OpAppend || p == nil || !s.Exists {
		return false
	}
	if s.Closed {
		return in.Body != "" && s.Closer == encodeProducer(*p)
	}
	adm, err := model.AdmitProducer(s.producer(p.ID), model.Producer{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq})
	return err == nil && adm == model.AdmitDuplicate
}
