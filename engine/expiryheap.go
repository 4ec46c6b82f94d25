package engine

// expiryEntry is one indexed stream: due is the Unix ms from which it may have expired.
type expiryEntry struct {
	due int64
	sid uint64
	key string
}

// expiryHeap is one bucket's entries of the expiry index (expiry.go), a min-heap by due
// (container/heap); at is the index's position map, kept by Swap, Push and Pop; pos is
// the heap's own position in the index's bucketsByDue.
type expiryHeap struct {
	es     []expiryEntry
	at     map[uint64]int
	bucket string
	pos    int
}

func (h *expiryHeap) Len() int           { return len(h.es) }
func (h *expiryHeap) Less(i, j int) bool { return h.es[i].due < h.es[j].due }
func (h *expiryHeap) Swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.at[h.es[i].sid], h.at[h.es[j].sid] = i, j
}
func (h *expiryHeap) Push(x any) {
	en := x.(expiryEntry)
	h.at[en.sid] = len(h.es)
	h.es = append(h.es, en)
}
func (h *expiryHeap) Pop() any {
	x := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	delete(h.at, x.sid)
	return x
}

// bucketsByDue is a min-heap of non-empty bucket heaps by their first entry's due.
type bucketsByDue []*expiryHeap

func (b bucketsByDue) Len() int           { return len(b) }
func (b bucketsByDue) Less(i, j int) bool { return b[i].es[0].due < b[j].es[0].due }
func (b bucketsByDue) Swap(i, j int) {
	b[i], b[j] = b[j], b[i]
	b[i].pos, b[j].pos = i, j
}
func (b *bucketsByDue) Push(x any) {
	h := x.(*expiryHeap)
	h.pos = len(*b)
	*b = append(*b, h)
}
func (b *bucketsByDue) Pop() any {
	old := *b
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*b = old[:len(old)-1]
	return h
}
