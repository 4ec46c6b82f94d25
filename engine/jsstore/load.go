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
// (one rolled-up message each) and every incarnation (checkpoint, then the log after it;
// up to 64 at once).
func (s *Store) loadPartition(ctx context.Context, k int) (*partition, error) {
	st := s.streams[k]
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(fmt.Sprintf("%s.%d.>", s.root, k)))
	if err != nil {
		return nil, err
	}
	p := newPartition(k)
	base := fmt.Sprintf("%s.%d.", s.root, k)
	var sids []uint64
	aux := map[string]bool{} // incarnations with a checkpoint or chunks
	for subj := range info.State.Subjects {
		toks := strings.Split(strings.TrimPrefix(subj, base), ".")
		switch {
		case len(toks) == 1 && len(toks[0]) == 16:
			if sid, err := strconv.ParseUint(toks[0], 16, 64); err == nil {
				sids = append(sids, sid)
			}
		case len(toks) == 2 && len(toks[0]) == 16 && (toks[1] == "m" || toks[1] == "c"):
			aux[base+toks[0]] = true
		case len(toks) == 1 && toks[0] == "h":
			var h binding
			if _, err := s.lastRecord(ctx, k, subj, &h); err != nil {
				return nil, fmt.Errorf("id high-water mark: %w", err)
			}
			p.hwm = max(p.hwm, h.SID)
		case len(toks) == 2 && toks[0] == "n":
			var nm nameMsg
			seq, err := s.lastRecord(ctx, k, subj, &nm)
			if err != nil {
				return nil, fmt.Errorf("name binding %s: %w", subj, err)
			}
			p.names[nm.Name] = binding{SID: nm.SID, Seq: seq}
		case len(toks) == 2 && toks[0] == "b":
			var bm bucketMsg
			seq, err := s.lastRecord(ctx, k, subj, &bm)
			if err != nil {
				return nil, fmt.Errorf("bucket record %s: %w", subj, err)
			}
			p.buckets[bm.ID] = bucketEntry{Rec: bm.Rec, Seq: seq}
		}
	}
	if err := s.loadKV(ctx, k, info.State.Subjects, &p.kv); err != nil {
		return nil, err
	}
	incs, errs := make([]*inc, len(sids)), make([]error, len(sids))
	s.run(len(sids), func(i int) { incs[i], errs[i] = s.loadInc(ctx, k, sids[i]) })
	for i, sid := range sids {
		if errs[i] != nil {
			return nil, fmt.Errorf("stream id %d: %w", sid, errs[i])
		}
		p.incs[sid] = incs[i]
		p.lastSID = max(p.lastSID, sid)
		incs[i].foldKV(&p.kv)
		delete(aux, s.logSubj(k, sid))
	}
	p.lastSID = max(p.lastSID, p.hwm)
	// What a collection interrupted after it purged a log left: checkpoint, chunks.
	for log := range aux {
		_ = s.purge(ctx, k, log+".>")
	}
	return p, nil
}

// loadInc folds incarnation sid of partition k: its checkpoint, if any, then every frame
// of its log after the checkpoint's sequence up to the last one the leader has.
func (s *Store) loadInc(ctx context.Context, k int, sid uint64) (*inc, error) {
	subj := s.logSubj(k, sid)
	in := newInc(sid)
	m, err := s.getMsg(ctx, k, msgGet{LastFor: subj + ".m"})
	switch {
	case err == nil:
		if err := json.Unmarshal(m.Data, in); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		in.fillMaps()
	case !errors.Is(err, errNotFound):
		return nil, err
	}
	last, err := s.getMsg(ctx, k, msgGet{LastFor: subj})
	if errors.Is(err, errNotFound) {
		return in, nil
	}
	if err != nil {
		return nil, err
	}
	err = s.eachFrame(ctx, k, sid, in.Seq+1, last.Seq, func(f *frame) bool {
		in.apply(f, s.opts.IndexBytes)
		for i := range f.head.Parts {
			if kv := f.head.Parts[i].KV; len(kv) > 0 {
				in.kvSeen = append(in.kvSeen, kvAt{seq: f.seq, puts: kv})
			}
		}
		return true
	})
	return in, err
}

// foldKV folds the subscription records of the frames loaded into st (newest wins).
func (in *inc) foldKV(st *kvState) {
	for _, at := range in.kvSeen {
		for _, p := range at.puts {
			st.apply(p, at.seq)
		}
	}
	in.kvSeen = nil
}

func (in *inc) fillMaps() {
	if in.Prods == nil {
		in.Prods = map[string]*storage.ProducerState{}
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
	s.decoded.Add(1)
	h, data, err := decodeHead(b)
	if err != nil {
		return nil, err
	}
	if len(h.Chunks) > 0 {
		body := make([]byte, 0, h.Size)
		for _, cs := range h.Chunks {
			c, err := s.getMsg(ctx, k, msgGet{Seq: cs})
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
	raw, err := s.getMsg(ctx, k, msgGet{Seq: seq})
	if err != nil {
		return nil, err
	}
	return s.decodeFrame(ctx, k, seq, raw.Data)
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
		in.foldKV(&p.kv)
		s.sidPart[sid] = k
		p.lastSID = max(p.lastSID, sid)
	}
}

// reloadName re-reads a name's binding from the leader after a failed publish.
func (s *Store) reloadName(k int, name string) {
	ctx, cancel := s.readCtx()
	defer cancel()
	var nm nameMsg
	if seq, err := s.lastRecord(ctx, k, s.nameSubj(k, name), &nm); err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if p := s.parts[k]; p != nil {
			p.names[name] = binding{SID: nm.SID, Seq: seq}
		}
	}
}

// reloadBucket re-reads a bucket record from the leader after a failed publish.
func (s *Store) reloadBucket(k int, id string) {
	ctx, cancel := s.readCtx()
	defer cancel()
	var bm bucketMsg
	if seq, err := s.lastRecord(ctx, k, s.bucketSubj(k, id), &bm); err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if p := s.parts[k]; p != nil {
			p.buckets[id] = bucketEntry{Rec: bm.Rec, Seq: seq}
		}
	}
}

// lastRecord decodes the last message of a rolled-up subject into v and returns its seq
// (0, v untouched, when the subject is empty).
func (s *Store) lastRecord(ctx context.Context, k int, subj string, v any) (uint64, error) {
	m, err := s.getMsg(ctx, k, msgGet{LastFor: subj})
	switch {
	case errors.Is(err, errNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return m.Seq, json.Unmarshal(m.Data, v)
}
