package difftest

import (
	"strconv"

	"github.com/dsd-project/dsd/model"
)

// ordinal names a record of stream v (extension §6.1): mostly one in [F, N], sometimes
// below F (410), past N (400), or not an ordinal.
func (g *generator) ordinal(v model.StreamView, exists bool) string {
	if !exists || g.chance(8) {
		return oneOf(g, []string{"-1", "01", "abc", "", "+1", "18446744073709551616", "1.0"})
	}
	f, n := v.RecordFirst, v.RecordNext
	switch g.pick(8) {
	case 0:
		return u(n + 1)
	case 1:
		if f > 0 {
			return u(uint64(g.pick(int(f))))
		}
	case 2:
		return u(n)
	case 3:
		return u(f)
	}
	return u(f + uint64(g.pick(int(n-f)+1)))
}

// recordMatch is a Stream-Record-Match value (extension §6.4): mostly N, sometimes
// another number or not a number.
func (g *generator) recordMatch(v model.StreamView, exists bool) string {
	switch {
	case !exists || g.chance(8):
		return oneOf(g, []string{"abc", "", "-1", "01"})
	case g.chance(70):
		return u(v.RecordNext)
	case g.chance(50) && v.RecordNext > 0:
		return u(v.RecordNext - 1)
	}
	return u(v.RecordNext + 1)
}

// recordRead is a record-aware read (extension §6.6-§6.8): a start by record=,
// record=now or tail_records=, sometimes with max_records= or the envelope view, and
// now and then a combination §6.6 forbids.
func (g *generator) recordRead(c model.ReadStream, v model.StreamView, exists bool) model.ReadStream {
	switch r := g.pick(100); {
	case r < 40 && v.RecordFirst > 0:
		c.Record = model.Str(u(uint64(g.pick(int(v.RecordFirst)))))
	case r < 45:
		c.Record = model.Str(g.ordinal(v, exists))
	case r < 55:
		c.Record = model.Str("now")
	default:
		c.TailRecords = model.Str(oneOf(g, []string{"0", "1", "2", "5", "100", "x"}))
	}
	if g.chance(30) {
		c.MaxRecords = model.Str(oneOf(g, []string{"1", "2", "3", "0", "2147483648", "2147483649", "a"}))
	}
	if g.chance(25) {
		c.RecordView = model.Str(oneOf(g, []string{"envelope", "envelope", "envelope", "raw"}))
	}
	switch g.pick(30) {
	case 0:
		c.Offset = model.Str("-1")
	case 1:
		c.MaxBytes = model.Str(strconv.Itoa(1 + g.pick(64)))
	case 2:
		c.Record, c.TailRecords = nil, nil // max_records or record_view alone
		if c.MaxRecords == nil && c.RecordView == nil {
			c.MaxRecords = model.Str("1")
		}
	case 3:
		c.Record, c.TailRecords = model.Str("0"), model.Str("1")
	}
	return c
}
