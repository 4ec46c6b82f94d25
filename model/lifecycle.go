package model

import "time"

// Stream lifetimes with forks (B-4.2-10, B-4.2-11, A-14, A-23). A fork references the
// incarnation of its source; a stream's reference count is the number of streams bound
// anywhere (soft-deleted ones included) that are forks of it. Deleting or expiring a
// stream that is referenced soft-deletes it: it keeps its path (PUT 409), answers 410
// and its data stays readable through its forks. A stream that is gone releases its
// reference on its source, and a soft-deleted source left without references goes too,
// up the chain.

// refs is the number of forks that reference the incarnation bound at key.
func (s State) refs(key StreamKey) int {
	st := s.streams[key]
	if st == nil {
		return 0
	}
	n := 0
	for _, f := range s.streams {
		if f.fork != nil && f.fork.source == key && f.fork.sourceIncarnation == st.incarnation {
			n++
		}
	}
	return n
}

// settle applies expiry as of now to every stream (A-14: expiry is a fact; dsd applies
// it lazily, on access and in a background sweep, and this model at once): an expired
// stream that forks still reference is soft-deleted (A-14, A-23: "a source that
// expires while forked counts as soft-deleted"), any other is gone; gone streams
// release their sources (B-4.2-11, A-23: a fork's reference is released when it is
// deleted or expires). Soft-deleted streams do not expire again.
func (s State) settle(now time.Time) State {
	for _, key := range s.Streams() {
		st := s.streams[key]
		if st == nil || st.softDeleted || !st.expired(now) {
			continue
		}
		s = s.drop(key)
	}
	return s
}

// drop deletes the stream at key (B-5.4-01, B-4.2-10): soft while forks reference it,
// else it is gone and releases its source.
func (s State) drop(key StreamKey) State {
	if s.refs(key) > 0 {
		st := s.streams[key].clone()
		st.softDeleted = true
		return s.withStream(key, st)
	}
	return s.remove(key)
}

// remove unbinds the stream at key, then frees every soft-deleted source up the fork
// chain that is left without references (B-4.2-11: GC cascades; here at once).
func (s State) remove(key StreamKey) State {
	for {
		st := s.streams[key]
		s = s.withStream(key, nil)
		if st == nil || st.fork == nil {
			return s
		}
		src := s.streams[st.fork.source]
		if src == nil || src.incarnation != st.fork.sourceIncarnation || !src.softDeleted || s.refs(st.fork.source) > 0 {
			return s
		}
		key = st.fork.source
	}
}

// deleteStream: DELETE {stream} (B-5.4-01): 400 for bad ids, 404 for a missing or expired
// stream, 410 for a soft-deleted one (B-4.2-10), else 204. A stream that forks
// reference is soft-deleted (B-4.2-10); any other is gone with its data and producer
// state, a later PUT creating a new incarnation, and its source is released
// (B-4.2-11).
func (s State) deleteStream(c DeleteStream, now time.Time) (State, Result) {
	if err := checkKey(c.Stream); err != nil {
		return s, fail(StatusBadRequest, err)
	}
	s, st, res := s.liveOrGone(c.Stream, now)
	if st == nil {
		return s, res
	}
	return s.drop(c.Stream), Result{Status: StatusNoContent}
}
