package boltstore

import (
	"errors"
	"fmt"
	"testing"
)

// Recovery applies the log in runs of at most the bound's bytes (a larger group alone),
// each run with the position after its last group, the last run with the end position,
// and stops at the first failure.
func TestReplayBatchesBoundsEachRun(t *testing.T) {
	var groups []loggedGroup
	for i, size := range []int64{3, 3, 3, 9, 1, 1, 4} {
		groups = append(groups, loggedGroup{end: logPos{1, uint64(10 * (i + 1))}, size: size})
	}
	end := logPos{seg: 2}
	cases := []struct {
		bound int64
		want  string
	}{
		{6, "[3 3]@{1 20} [3]@{1 30} [9]@{1 40} [1 1 4]@{2 0}"},
		{1, "[3]@{1 10} [3]@{1 20} [3]@{1 30} [9]@{1 40} [1]@{1 50} [1]@{1 60} [4]@{2 0}"},
		{100, "[3 3 3 9 1 1 4]@{2 0}"},
	}
	for _, c := range cases {
		var got string
		err := replayBatches(groups, c.bound, end, func(batch []loggedGroup, pos logPos) error {
			got += fmt.Sprintf(" %v@%v", sizes(batch), pos)
			return nil
		})
		if err != nil || got[1:] != c.want {
			t.Errorf("bound %d: %q, %v; want %q", c.bound, got[1:], err, c.want)
		}
	}
	if err := replayBatches(nil, 6, end, func(batch []loggedGroup, pos logPos) error {
		if len(batch) != 0 || pos != end {
			t.Errorf("no groups: run %v at %v, want one empty run at %v", sizes(batch), pos, end)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop, runs := errors.New("disk full"), 0
	err := replayBatches(groups, 6, end, func([]loggedGroup, logPos) error {
		runs++
		if runs == 2 {
			return stop
		}
		return nil
	})
	if err != stop || runs != 2 {
		t.Fatalf("a failing run: %v after %d runs, want %v after 2", err, runs, stop)
	}
}

func sizes(batch []loggedGroup) []int64 {
	var out []int64
	for _, g := range batch {
		out = append(out, g.size)
	}
	return out
}
