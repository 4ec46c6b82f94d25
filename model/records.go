package model

import "sort"

// Record coordinates (extension §6.1). A JSON stream's records are its messages: record
// r is the r-th message ever appended (forks keep their source's ordinals, CONFORMANCE.md
// "Forks and the extensions"), so ordinals need no storage of their own. F, the first
// retained ordinal, is the number of messages before the retention boundary; N is the
// number of messages; O(r), the offset of record r, is the r-th boundary.

// recordNext is N: the next ordinal, the record tail.
func (st *stream) recordNext() uint64 { return uint64(len(st.msgEnds)) }

// recordFirst is F: the ordinal of the first retained record (the retention boundary is
// a message boundary).
func (st *stream) recordFirst() uint64 { return st.ordinalAt(st.retained) }

// ordinalAt is the ordinal of the record starting at boundary o (N at the tail).
func (st *stream) ordinalAt(o Offset) uint64 {
	return uint64(sort.Search(len(st.msgEnds), func(i int) bool { return st.msgEnds[i] > uint64(o) }))
}

// recordOffset is O(r) for F <= r <= N (the tail for r = N).
func (st *stream) recordOffset(r uint64) Offset {
	if r == 0 {
		return 0
	}
	return Offset(st.msgEnds[r-1])
}
