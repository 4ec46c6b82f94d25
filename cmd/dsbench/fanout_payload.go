package main

import (
	"bytes"
	"strconv"
	"time"
)

// fanoutPayload returns one fan-out message: "SEQ SENT_NS " padded with 'x' to size bytes
// (or longer when the numbers need it), ending in "\n". SENT_NS is nanoseconds since the run's
// monotonic base instant, so publish-to-receive latency needs no clock sync.
func fanoutPayload(seq int64, sent time.Duration, size int) []byte {
	b := strconv.AppendInt(nil, seq, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(sent), 10)
	b = append(b, ' ')
	for len(b) < size-1 {
		b = append(b, 'x')
	}
	return append(b, '\n')
}

// parseFanoutLine parses one message line (without its "\n"); ok is false if it is not one.
func parseFanoutLine(line []byte) (seq int64, sent time.Duration, ok bool) {
	a, rest, found := bytes.Cut(line, []byte{' '})
	if !found {
		return 0, 0, false
	}
	b, _, _ := bytes.Cut(rest, []byte{' '})
	seq, err1 := strconv.ParseInt(string(a), 10, 64)
	ns, err2 := strconv.ParseInt(string(b), 10, 64)
	if err1 != nil || err2 != nil || seq < 0 {
		return 0, 0, false
	}
	return seq, time.Duration(ns), true
}

// fanoutTracker is one subscriber's view of the fan-out: which sequence numbers arrived, how
// often, and how late. Used by one goroutine at a time.
type fanoutTracker struct {
	seen      []uint64 // bitset of received sequence numbers
	Unique    int64    // distinct sequence numbers received
	Dups      int64    // deliveries of an already received sequence number
	Reordered int64    // sequence numbers that arrived after a higher one
	Malformed int64    // data lines that are not fan-out messages
	maxSeq    int64
	Latency   Histogram // publish-to-receive latency of first deliveries
}

func newFanoutTracker() *fanoutTracker { return &fanoutTracker{maxSeq: -1} }

// Observe records every message line of one data event received at elapsed (since the base
// instant). A data event may carry several messages (servers may batch appends).
func (f *fanoutTracker) Observe(data []byte, elapsed time.Duration) {
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(line) == 0 {
			continue
		}
		seq, sent, ok := parseFanoutLine(line)
		if !ok {
			f.Malformed++
			continue
		}
		word, bit := seq/64, uint64(1)<<(seq%64)
		for int64(len(f.seen)) <= word {
			f.seen = append(f.seen, 0)
		}
		if f.seen[word]&bit != 0 {
			f.Dups++
			continue
		}
		f.seen[word] |= bit
		f.Unique++
		if seq < f.maxSeq {
			f.Reordered++
		}
		f.maxSeq = max(f.maxSeq, seq)
		f.Latency.Record(elapsed - sent)
	}
}

// Lost counts the sequence numbers seq with acked[seq] that were never received.
func (f *fanoutTracker) Lost(acked []bool) int64 {
	var lost int64
	for seq, a := range acked {
		if word := seq / 64; a && (word >= len(f.seen) || f.seen[word]&(1<<(seq%64)) == 0) {
			lost++
		}
	}
	return lost
}
