package model

import (
	"fmt"
	"maps"
)

// ProducerState is what a stream remembers about one idempotent producer (B-5.2.1-03):
// its epoch, the highest sequence number accepted in that epoch, and the
// Stream-Next-Offset its last accepted append was acknowledged with (A-08: a duplicate
// of that last append gets the same offset back).
type ProducerState struct {
	Epoch   uint64
	LastSeq uint64
	LastEnd Offset
}

// Admission is the producer table's verdict on one request (B-5.2.1-03).
type Admission uint8

const (
	// AdmitAccept: the request is new; apply it and record (epoch, seq).
	AdmitAccept Admission = iota + 1
	// AdmitDuplicate: the request was already applied; answer 204 and write nothing.
	AdmitDuplicate
)

// AdmitProducer applies the validation table of B-5.2.1-03 to the triple p against the
// producer's state st (nil: the stream has never accepted this Producer-Id). It is the
// single statement of the table; the state machine and the linearizability model both
// call it.
//
//	no state, seq = 0              accept                     (B-5.2.1-03)
//	no state, seq > 0              *SeqGapError{0, seq}      
//	epoch < state.epoch            *StaleEpochError{current}  (403)
//	epoch > state.epoch, seq != 0  ErrEpochSeqNotZero         (400)
//	epoch > state.epoch, seq = 0   accept (epoch claim)
//	same epoch, seq <= lastSeq     duplicate                  (204)
//	same epoch, seq = lastSeq+1    accept
//	same epoch, seq > lastSeq+1    *SeqGapError{lastSeq+1, seq} (409)
func AdmitProducer(st *ProducerState, p Producer) (Admission, error) {
	switch {
	case st == nil && p.Seq == 0:
		return AdmitAccept, nil
	case st == nil:
		return 0, &SeqGapError{Expected: 0, Received: p.Seq}
	case p.Epoch < st.Epoch:
		return 0, &StaleEpochError{Current: st.Epoch}
	case p.Epoch > st.Epoch && p.Seq != 0:
		return 0, ErrEpochSeqNotZero
	case p.Epoch > st.Epoch:
		return AdmitAccept, nil
	case p.Seq <= st.LastSeq:
		return AdmitDuplicate, nil
	case p.Seq == st.LastSeq+1:
		return AdmitAccept, nil
	}
	return 0, &SeqGapError{Expected: st.LastSeq + 1, Received: p.Seq}
}

// StreamSeqRegresses reports whether a Stream-Seq value next must be refused after last
// (B-5.2-05, A-06): values are compared as raw bytes and must strictly increase. last is
// nil while the stream has recorded none.
func StreamSeqRegresses(last *string, next string) bool {
	return last != nil && next <= *last
}

// recordRange is the record range an accepted producer request was acknowledged with
// (extension §6.3): its receipt, so that a deduplicated retry gets it back.
type recordRange struct{ start, next uint64 }

func receiptKey(p Producer) string { return fmt.Sprintf("%s\x00%d\x00%d", p.ID, p.Epoch, p.Seq) }

// setReceipt keeps the record range of an accepted producer request of a JSON stream.
// dsd keeps one per accepted (id, epoch, seq) on JSON streams, so a duplicate of any
// earlier seq of the epoch gets its original range (CONFORMANCE.md "Producer retries",
// extension §6.3).
func (st *stream) setReceipt(p Producer, start, next uint64) {
	if !st.isJSON() {
		return
	}
	m := maps.Clone(st.receipts)
	if m == nil {
		m = map[string]recordRange{}
	}
	m[receiptKey(p)] = recordRange{start, next}
	st.receipts = m
}

// receipt returns the record range a producer request was acknowledged with; the empty
// range at N when none is kept.
func (st *stream) receipt(p Producer) (start, next uint64) {
	if r, ok := st.receipts[receiptKey(p)]; ok {
		return r.start, r.next
	}
	n := st.recordNext()
	return n, n
}
