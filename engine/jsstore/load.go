package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/engine/storage"
)

// loadPartition folds partition k from JetStream: every name binding and bucket record
// (one rolled-up message each) and every incarnation (checkpoint, then the log after it).
func (s *Store) loadPartition(ctx context.Context, k int) (*partition, error) {
	st := s.streams[k]
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(fmt.Sprintf("%s.%d.>", s.root, k)))
	if err != nil {
		return nil, err
	}
	p := newPartition(k)
	base := fmt.Sprintf("%s.%d.", s.root, k)
	for subj := range info.State.Subjects {
		toks := strings.Split(strings.TrimPrefix(subj, base), ".")
		switch {
		case len(toks) == 1 && len(toks[0]) == 16:
			sid, err := strconv.ParseUint(toks[0], 16, 64)
			if err != nil {
				continue
			}
			in, err := s.loadInc(ctx, k, sid)
			if err != nil {
				return nil, fmt.Errorf("stream id %d: %w", sid, err)
			}
			p.incs[sid] = in
			p.lastSID = max(p.lastSID, sid)
		case len(toks) == 2 && toks[0] == "n":
			m, err := st.GetLastMsgForSubject(ctx, subj)
			if err != nil {
				return nil, err
			}
			var nm nameMsg
			if err := json.Unmarshal(m.Data, &nm); err != nil {
				return nil, fmt.Errorf("name binding %s: %w", subj, err)
			}
			p.names[nm.Name] = binding{SID: nm.SID, Seq: m.Sequence}
		case len(toks) == 2 && toks[0] == "b":
			m, err := st.GetLastMsgForSubject(ctx, subj)
			if err != nil {
				return nil, err
			}
			var bm bucketMsg
			if err := json.Unmarshal(m.Data, &bm); err != nil {
				return nil, fmt.Errorf("bucket record %s: %w", subj, err)
			}
			p.buckets[bm.ID] = bucketEntry{Rec: bm.Rec, Seq: m.Sequence}
		}
	}
	return p, nil
}

// loadInc folds incarnation sid of partition k: its checkpoint, if any, then every frame
// of its log after the checkpoint's sequence.
func (s *Store) loadInc(ctx context.Context, k int, sid uint64) (*inc, error) {
	st := s.streams[k]
	subj := s.logSubj(k, sid)
	in := newInc(sid)
	m, err := st.GetLastMsgForSubject(ctx, subj+".m")
	switch {
	case err == nil:
		if err := json.Unmarshal(m.Data, in); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		in.fillMaps()
	case !errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, err
	}
	for from := in.Seq + 1; ; {
		raw, err := st.GetMsg(ctx, from, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return in, nil
		}
		if err != nil {
			return nil, err
		}
		f, err := s.decodeFrame(ctx, k, raw.Sequence, raw.Data)
		if err != nil {
			return nil, fmt.Errorf("frame %d: %w", raw.Sequence, err)
		}
		in.apply(f, s.opts.IndexBytes)
		from = raw.Sequence + 1
	}
}

func (in *inc) fillMaps() {
	if in.Prods == nil {
		in.Prods = map[string]*storage.ProducerState{}
	}
	if in.Rcpts == nil {
		in.Rcpts = map[string]storage.Receipt{}
	}
	if in.Snaps == nil {
		in.Snaps = map[uint64]bodyRef{}
	}
}

// decodeFrame decodes a frame message, fetching its chunks when it has them.
func (s *Store) decodeFrame(ctx context.Context, k int, seq uint64, b []byte) (*frame, error) {
	if f := s.frames.get(k, seq); f != nil {
		return f, nil
	}
	h, data, err := decodeHead(b)
	if err != nil {
		return nil, err
	}
	if len(h.Chunks) > 0 {
		body := make([]byte, 0, h.Size)
		for _, cs := range h.Chunks {
			c, err := s.streams[k].GetMsg(ctx, cs)
			if err != nil {
				return nil, fmt.Errorf("chunk %d: %w", cs, err)
			}
			body = append(body, c.Data...)
		}
		if h, data, err = decodeHead(body); err != nil {
			return nil, err
		}
	}
	f := &frame{seq: seq, head: h, data: data}
	s.frames.put(k, f)
	return f, nil
}

// frameAt returns the frame at seq of partition k.
func (s *Store) frameAt(ctx context.Context, k int, seq uint64) (*frame, error) {
	if f := s.frames.get(k, seq); f != nil {
		return f, nil
	}
	raw, err := s.streams[k].GetMsg(ctx, seq)
	if err != nil {
		return nil, err
	}
	return s.decodeFrame(ctx, k, seq, raw.Data)
}

// nextFrame returns the first frame of sid's log at or after seq, nil when none.
func (s *Store) nextFrame(ctx context.Context, k int, sid, seq uint64) (*frame, error) {
	raw, err := s.streams[k].GetMsg(ctx, seq, jetstream.WithGetMsgSubject(s.logSubj(k, sid)))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.decodeFrame(ctx, k, raw.Sequence, raw.Data)
}

// reloadInc replaces sid's state with a fresh fold of its log (after a conflict or an
// unresolved publish); on failure the stale state stays, so its next commit conflicts
// and reloads again.
func (s *Store) reloadInc(k int, sid uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ResolveTimeout)
	defer cancel()
	in, err := s.loadInc(ctx, k, sid)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.parts[k]; p != nil {
		if in.Seq == 0 {
			delete(p.incs, sid)
			return
		}
		p.incs[sid] = in
		s.sidPart[sid] = k
		p.lastSID = max(p.lastSID, sid)
	}
}

func (s *Store) reloadName(k int, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ResolveTimeout)
	defer cancel()
	m, err := s.streams[k].GetLastMsgForSubject(ctx, s.nameSubj(k, name))
	var nm nameMsg
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		m, err = &jetstream.RawStreamMsg{}, nil
	} else if err == nil {
		err = json.Unmarshal(m.Data, &nm)
	}
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.parts[k]; p != nil {
		p.names[name] = binding{SID: nm.SID, Seq: m.Sequence}
	}
}

func (s *Store) reloadBucket(k int, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ResolveTimeout)
	defer cancel()
	m, err := s.streams[k].GetLastMsgForSubject(ctx, s.bucketSubj(k, id))
	var bm bucketMsg
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		m, err = &jetstream.RawStreamMsg{}, nil
	} else if err == nil {
		err = json.Unmarshal(m.Data, &bm)
	}
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.parts[k]; p != nil {
		p.buckets[id] = bucketEntry{Rec: bm.Rec, Seq: m.Sequence}
	}
}
