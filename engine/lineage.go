package engine

import "github.com/dsd-project/dsd/model"

// Lineage is where a stream comes from and how many forks lean on it (B-4.2). The protocol
// never echoes fork headers (B-4.2-18); the admin listener shows this to the console.
type Lineage struct {
	// ForkedFrom is the source path as the fork's PUT named it (Stream-Forked-From), empty
	// when the stream is not a fork; ForkOffset is the end of the inherited range and
	// ForkSubOffset the messages inherited past it (JSON streams).
	ForkedFrom    string
	ForkOffset    model.Offset
	ForkSubOffset uint64
	// Forks counts the live forks that reference this stream (B-4.2-10).
	Forks int
}

// Lineage returns the stream's fork parent and fork count.
// Errors: model.ErrStreamNotFound, model.ErrStreamGone.
func (e *Engine) Lineage(key model.StreamKey) (Lineage, error) {
	_, v, err := e.readable(key, false)
	if err != nil {
		return Lineage{}, err
	}
	l := Lineage{Forks: v.Refs}
	if f := v.Fork; f != nil {
		l.ForkedFrom, l.ForkOffset, l.ForkSubOffset = f.SourcePath, model.Offset(f.Anchor), f.SubOffset
	}
	return l, nil
}
