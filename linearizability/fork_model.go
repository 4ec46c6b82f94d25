package linearizability

// stepFork creates a fork (B-4.2) at an explicit Stream-Fork-Offset: its content is the
// source's before that offset, which the client read just before (offsets are opaque:
// the model cannot compute it, the source's own partition checked that read), and then
// only its own appends: source appends after the fork never reach it (B-4.2-18). Its
// 201 reports the fork point as Stream-Next-Offset; a repeat of the same request is 200
// on the open fork and 409 once it is closed (B-4.2-07, B-5.1-02).
func stepFork(s State, in Input, out Output) (bool, State) {
	forked := State{Exists: true, Tail: in.Offset, TailExact: true, Len: in.InhLen, Digest: in.InhDigest}
	switch {
	case out.Unknown():
		if !s.Exists {
			return true, forked
		}
		return true, s
	case !s.Exists:
		return out.Status == 201 && out.Offset == in.Offset, forked
	case s.Closed:
		return s.refused(out.Status == 409, out)
	case out.Status != 200:
		return false, s
	}
	return s.atTail(out.Offset)
}

// stepDelete deletes the stream (B-5.4-01): 404 when missing, 204 otherwise; one that a
// fork references is soft-deleted (B-4.2-10), any other is gone.
func stepDelete(s State, in Input, out Output) (bool, State) {
	gone := State{}
	if in.Forked {
		gone = s
		gone.SoftDeleted = true
	}
	switch {
	case out.Unknown():
		if s.Exists {
			return true, gone
		}
		return true, s
	case !s.Exists:
		return out.Status == 404, s
	}
	return out.Status == 204, gone
}

// stepGone answers on a soft-deleted stream (B-4.2-10): 410 for GET, HEAD, POST and
// DELETE (and the extension resources), 409 for PUT; nothing changes.
func stepGone(s State, in Input, out Output) (bool, State) {
	switch {
	case out.Unknown():
		return true, s
	case in.Kind == OpCreate || in.Kind == OpFork:
		return out.Status == 409, s
	}
	return out.Status == 410, s
}
