package linearizability

// planForks adds a fork of every plain stream, made when the main phase is between a
// fifth and a half through.
func (w *workload) planForks() {
	var forks []*streamPlan
	for i, s := range w.streams {
		if s.role != rolePlain {
			continue
		}
		at := int64(w.cfg.Ops) * int64(20+30*i/max(1, len(w.streams))) / 100
		forks = append(forks, &streamPlan{name: s.name + "-fork", role: roleFork, source: s, forkAt: at,
			closeAt: s.closeAt + int64(w.cfg.Ops)/20})
	}
	w.streams = append(w.streams, forks...)
}

// createFork reads the source from -1, appends to it, and forks it at the offset the
// read ended at: the fork's inherited content is what the read returned (B-4.2-02;
// plain streams have no retention, so the read starts at position 0), and the appends
// made since must not reach the fork (B-4.2-18).
func (w *workload) createFork(cr *ClientRecorder, f *streamPlan, body func() string) {
	src := f.source
	var out Output
	w.shared(src, func() {
		out = cr.Do(Input{Kind: OpRead, Stream: src.name}, func() Output { o, _ := w.client.ReadAll(src.name); return o })
		for i := 0; i < 2 && out.Status == 200; i++ {
			in := Input{Kind: OpAppend, Stream: src.name, Body: body()}
			cr.Do(in, func() Output { return w.client.Append(in) })
		}
	})
	if out.Status != 200 || out.Offset == "" {
		return
	}
	in := Input{Kind: OpFork, Stream: f.name, Source: src.name, Offset: out.Offset, InhLen: out.Len, InhDigest: out.Digest}
	f.forkIn.Store(&in)
	w.shared(f, func() {
		res := cr.Do(in, func() Output { return w.client.Fork(f.name, src.name, in.Offset) })
		f.forked.Store(res.Status == 201 || res.Status == 200)
	})
}

// repeatFork sends the fork request again (B-4.2-07: 200 while the config matches) or,
// before there is one, a HEAD.
func (w *workload) repeatFork(cr *ClientRecorder, f *streamPlan) {
	in := f.forkIn.Load()
	if in == nil {
		cr.Do(Input{Kind: OpHead, Stream: f.name}, func() Output { return w.client.Head(f.name) })
		return
	}
	cr.Do(*in, func() Output { return w.client.Fork(f.name, in.Source, in.Offset) })
}

// deleteForkedSources runs after the live readers are done: each stream with a fork is
// deleted, which soft-deletes it (B-4.2-10); then it answers 410 to a read and 409 to a
// PUT, and its fork still reads its whole content.
func (w *workload) deleteForkedSources(cr *ClientRecorder) {
	for _, f := range w.streams {
		if f.role != roleFork || !f.forked.Load() {
			continue
		}
		src := f.source.name
		del := cr.Do(Input{Kind: OpDelete, Stream: src, Forked: true}, func() Output { return w.client.Delete(src) })
		if del.Status != 204 {
			continue
		}
		cr.Do(Input{Kind: OpRead, Stream: src}, func() Output { o, _ := w.client.ReadAll(src); return o })
		cr.Do(Input{Kind: OpCreate, Stream: src}, func() Output { return w.client.Create(src) })
		cr.Do(Input{Kind: OpHead, Stream: src}, func() Output { return w.client.Head(src) })
		cr.Do(Input{Kind: OpRead, Stream: f.name}, func() Output { o, _ := w.client.ReadAll(f.name); return o })
	}
}
