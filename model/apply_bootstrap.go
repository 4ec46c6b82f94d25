package model

import (
	"bytes"
	"time"
)

// Bootstrap is GET {stream}/bootstrap (extension §3); Live is the live query parameter
// as sent (nil: absent).
type Bootstrap struct {
	Stream StreamKey
	Live   *string
}

// Name implements Command.
func (c Bootstrap) Name() string {
	if c.Live != nil {
		return "GET /" + c.Stream.String() + "/bootstrap?live=" + *c.Live
	}
	return "GET /" + c.Stream.String() + "/bootstrap"
}

// Part is one part of a /bootstrap response (extension §3.2).
type Part struct {
	ContentType string
	Body        []byte
}

// bootstrap: GET {stream}/bootstrap (extension §3): 400 bad ids; 400 INVALID_LIVE_MODE
// with any live parameter (§3.3: one-shot only); 404 missing or expired stream. It is a
// read of the stream: it restarts the sliding TTL. 200, multipart/mixed, with:
//
//   - the first part: the visible snapshot's bytes with its stored Content-Type, or an
//     empty application/octet-stream part when there is none (§3.2);
//   - then one part per retained message after the snapshot's offset (without a
//     snapshot: from the retention boundary), with the stream's Content-Type; a JSON
//     message is its compact JSON without the canonical "\n" (D3, CONFORMANCE.md
//     "Bootstrap"), so each update part is one logical message (§6.10);
//   - Stream-Snapshot-Offset (the offset, or -1 without a snapshot) and -Digest,
//     Stream-Next-Offset (the tail), Stream-Up-To-Date: true, and Stream-Closed when the
//     stream is closed; on a JSON stream Stream-Extensions, F, N (§6.10) and
//     Stream-Record-Start, the ordinal of the first update part (CONFORMANCE.md).
func (s State) bootstrap(c Bootstrap, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	if c.Live != nil {
		return s, fail(StatusBadRequest, ErrBootstrapLive)
	}
	s, st, res := s.touchLive(c.Stream, now)
	if st == nil {
		return s, res
	}
	first := Part{ContentType: DefaultContentType, Body: []byte{}}
	from := st.retained
	ref := &SnapshotRef{}
	if sn := st.snapshot; sn != nil {
		first = Part{ContentType: sn.contentType, Body: append([]byte(nil), sn.body...)}
		from, ref = sn.offset, sn.ref()
	}
	parts := []Part{first}
	for _, m := range st.messagesFrom(from) {
		if st.isJSON() {
			m = bytes.TrimSuffix(m, []byte("\n"))
		}
		parts = append(parts, Part{ContentType: st.contentType, Body: append([]byte(nil), m...)})
	}
	res = Result{Status: StatusOK, ContentType: "multipart/mixed", NextOffset: offsetPtr(st.tail()),
		UpToDate: true, Closed: st.closed, Snapshot: ref, Parts: parts}.recordBounds(st)
	if st.isJSON() {
		res.RecordStart = u64Ptr(st.ordinalAt(from))
	}
	return s, res
}

// messagesFrom returns the messages from boundary o to the tail, each its canonical
// bytes (aliasing st.data).
func (st *stream) messagesFrom(o Offset) [][]byte {
	var out [][]byte
	start := uint64(o)
	for _, end := range st.msgEnds {
		if end <= uint64(o) {
			continue
		}
		out = append(out, st.data[start:end])
		start = end
	}
	return out
}
