package engine

import (
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// receiptsKept bounds the acknowledgements remembered per producer for deduplicated
// retries of earlier sequence numbers.
const receiptsKept = 8

// producerState is the stored state of one idempotent producer of a stream
// (B-5.2.1-03): its epoch, the highest accepted seq, and the acknowledgements of its most
// recent accepted appends (so a retry gets its original offsets and record range back).
type producerState storage.ProducerState

// receipt is the acknowledgement of one accepted producer append.
type receipt = storage.Receipt

// stored returns st as the storage type (no copy).
func (st *producerState) stored() *storage.ProducerState { return (*storage.ProducerState)(st) }

// admission is the producer table's verdict on one request (B-5.2.1-03).
type admission uint8

const (
	admitAccept admission = iota
	admitDuplicate
)

// admit applies the validation table to p against state st (nil: unknown producer).
// Errors: *model.StaleEpochError, *model.SeqGapError, model.ErrEpochSeqNotZero.
func admit(st *producerState, p *model.Producer) (admission, error) {
	switch {
	case st == nil && p.Seq == 0:
		return admitAccept, nil
	case st == nil:
		return 0, &model.SeqGapError{Expected: 0, Received: p.Seq}
	case p.Epoch < st.Epoch:
		return 0, &model.StaleEpochError{Current: st.Epoch}
	case p.Epoch > st.Epoch && p.Seq != 0:
		return 0, model.ErrEpochSeqNotZero
	case p.Epoch > st.Epoch:
		return admitAccept, nil
	case p.Seq <= st.LastSeq:
		return admitDuplicate, nil
	case p.Seq == st.LastSeq+1:
		return admitAccept, nil
	}
	return 0, &model.SeqGapError{Expected: st.LastSeq + 1, Received: p.Seq}
}

// receiptFor returns the acknowledgement of an earlier accepted seq, if remembered.
func (st *producerState) receiptFor(seq uint64) (receipt, bool) {
	for i := len(st.Receipts) - 1; i >= 0; i-- {
		if st.Receipts[i].Seq == seq {
			return st.Receipts[i], true
		}
	}
	return receipt{}, false
}

// accepted returns the state after accepting p with acknowledgement r.
func accepted(st *producerState, p *model.Producer, r receipt) *producerState {
	n := &producerState{Epoch: p.Epoch, LastSeq: p.Seq}
	if st != nil && st.Epoch == p.Epoch {
		keep := st.Receipts
		if len(keep) >= receiptsKept {
			keep = keep[len(keep)-receiptsKept+1:]
		}
		n.Receipts = append(append([]receipt(nil), keep...), r)
	} else {
		n.Receipts = []receipt{r}
	}
	return n
}

// producer returns the decided state of producer id, loading it from storage on first
// use. s.mu is held.
func (e *Engine) producer(s *stream, id string) (*producerState, error) {
	if st, ok := s.producers[id]; ok {
		return st, nil
	}
	sp, err := e.st.Producer(s.sid, id)
	st := (*producerState)(sp)
	if err != nil {
		return nil, err
	}
	if s.producers == nil {
		s.producers = make(map[string]*producerState)
	}
	s.producers[id] = st
	return st, nil
}

// storedReceipt looks up the acknowledgement of (epoch, seq) of producer id. A read
// error counts as not found: the duplicate is then acknowledged without a record range.
func (e *Engine) storedReceipt(sid uint64, p *model.Producer) (receipt, bool) {
	r, ok, err := e.st.Receipt(sid, *p)
	return r, ok && err == nil
}
