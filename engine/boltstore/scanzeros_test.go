package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/dsd-project/dsd/engine/storage"
)

// zeroyGroups are appends whose records are hard on a zero tail: a client's bytes ending
// in 100 zeros, all zeros, zeros inside, a payload of 256 bytes (its length field starts
// with a zero byte), one of 512 ending in zeros, and one spanning pages.
func zeroyGroups() [][]storage.Change {
	vals := [][]byte{
		[]byte("m0"),
		append([]byte("a"), make([]byte, 100)...),
		make([]byte, 200),
		append(append([]byte("b"), make([]byte, 300)...), 'c'),
		sizedVal(256, 'd', false),
		sizedVal(512, 'e', true),
		append(bytes.Repeat([]byte("f"), 3000), make([]byte, 3000)...),
		[]byte("last"),
	}
	var out [][]storage.Change
	off := uint64(0)
	for _, v := range vals {
		val := append([]byte{storage.FlagUnitEnd}, v...)
		out = append(out, []storage.Change{{SID: 1, Messages: []storage.Message{{Off: off, Val: val}}}})
		off += uint64(len(v))
	}
	return out
}

// frames returns the records of groups one after another, and the end of each.
func frames(groups [][]storage.Change) (seg []byte, ends []int) {
	for _, g := range groups {
		seg = appendFrame(seg, g)
		ends = append(ends, len(seg))
	}
	return seg, ends
}

// sizedVal returns a value whose one-message record has a payload of exactly n bytes,
// of c (then zeros when zeroEnd).
func sizedVal(n int, c byte, zeroEnd bool) []byte {
	for k := 1; ; k++ {
		v := bytes.Repeat([]byte{c}, k)
		if zeroEnd {
			v = append(v[:1], make([]byte, k-1)...)
		}
		val := append([]byte{storage.FlagUnitEnd}, v...)
		rec := appendFrame(nil, []storage.Change{{SID: 1, Messages: []storage.Message{{Off: 1000, Val: val}}}})
		if len(rec)-frameHeader >= n {
			return v
		}
	}
}

// A crash while the last record overwrites the zeros ahead leaves any mix of its bytes
// and zeros (a cut at every byte, a lost first part, a lost block inside): the scan finds
// exactly the records whose bytes are all there, and calls the rest torn only when some
// of its bytes are, never damage. Spec: DESIGN.md D4.
func TestCrashInRecordOverZerosScansToWholeRecords(t *testing.T) {
	groups := zeroyGroups()
	seg, ends := frames(groups)
	if seg[ends[3]] != 0 {
		t.Fatalf("record 5's length field starts with %d, want 0", seg[ends[3]])
	}
	cases := 0
	for m := range groups {
		s, e := 0, ends[m]
		if m > 0 {
			s = ends[m-1]
		}
		for _, mut := range crashMutations(s, e) {
			b := append(append([]byte{}, seg[:e]...), make([]byte, 4096)...)
			clear(b[mut[0]:mut[1]])
			whole := m
			if bytes.Equal(b[s:e], seg[s:e]) {
				whole++
			}
			torn := whole == m && len(trimZeros(b[s:])) > 0
			var sc scanned
			err := sc.scanSegment(1, b, 0, true)
			if err != nil || len(sc.groups) != whole || (sc.torn != nil) != torn {
				t.Fatalf("record %d, zeros at %d..%d: %v, %d groups, torn %v; want %d, torn %v",
					m+1, mut[0], mut[1], err, len(sc.groups), sc.torn != nil, whole, torn)
			}
			cases++
		}
	}
	t.Logf("%d crash images of %d records", cases, len(groups))
}

// crashMutations returns the byte ranges of a record at s..e to zero: its end from a
// byte on (a cut), its start up to a byte (a lost first block), and blocks of 512 bytes
// inside it. The bytes are every one of a short record, and of a long one those near its
// ends and its 512-byte blocks' boundaries, and every 37th.
func crashMutations(s, e int) [][2]int {
	var out [][2]int
	for c := s; c <= e; c++ {
		if e-s > 1000 && c-s > 64 && e-c > 64 && (c-s)%512 > 8 && (c-s)%512 < 504 && (c-s)%37 != 0 {
			continue
		}
		out = append(out, [2]int{c, e}, [2]int{s, c})
	}
	for c := s; c+512 < e; c += 97 {
		out = append(out, [2]int{c, c + 512})
	}
	return out
}

// A record after any run of zeros is damage, wherever the run is, in the last segment or
// an earlier one: the zeros are not the end while a record follows them.
func TestRecordAfterZerosIsDamage(t *testing.T) {
	groups := zeroyGroups()
	seg, ends := frames(groups)
	for m := 0; m < len(groups)-1; m++ {
		for _, run := range []int{1, 7, 8, 100, 4096} {
			for _, last := range []bool{true, false} {
				t.Run(fmt.Sprintf("after%d/zeros%d/last=%v", m+1, run, last), func(t *testing.T) {
					b := append(append(append([]byte{}, seg[:ends[m]]...), make([]byte, run)...), seg[ends[m]:]...)
					b = append(b, make([]byte, 4096)...)
					var sc scanned
					if err := sc.scanSegment(1, b, 0, last); !errors.Is(err, ErrLogCorrupt) {
						t.Fatalf("%v (%d groups, torn %v), want ErrLogCorrupt", err, len(sc.groups), sc.torn != nil)
					}
				})
			}
		}
	}
}

// The zeroer keeps the bytes past the last record zeros, and at least ahead of them (up
// to the segment's size), whether a record ends exactly where the zeros end (a chunk's
// end), straddles that end, starts at it, or reaches past the segment's size; a cut
// (a failed record) removes the zeros with it.
func TestZeroerKeepsZerosAheadAtChunkEdges(t *testing.T) {
	const ahead, limit = zeroChunk, 3*zeroChunk + 100
	f, err := os.CreateTemp(t.TempDir(), "seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zeroer{ahead: ahead, limit: limit, noSync: true}
	z.setFile(f)
	var recs []byte
	write := func(n int) {
		rec := bytes.Repeat([]byte{byte(1 + len(recs)%250)}, n)
		if err := z.writeAt(rec, int64(len(recs))); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec...)
		for z.fill() {
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		want := min(int64(len(recs))+ahead, max(limit, int64(len(recs))))
		if !bytes.Equal(b[:len(recs)], recs) || len(trimZeros(b)) != len(recs) || int64(len(b)) < want {
			t.Fatalf("after a record of %d bytes: %d bytes, records %v, zeros only after them %v; want %d bytes",
				n, len(b), bytes.Equal(b[:len(recs)], recs), len(trimZeros(b)) == len(recs), want)
		}
	}
	write(100)
	write(zeroChunk) // ends exactly where the zeros end
	write(zeroChunk) // starts there, ends there again
	write(1000)
	write(zeroChunk + 5000) // straddles the zeros' end
	if err := z.truncate(int64(len(recs) - 5000)); err != nil {
		t.Fatal(err)
	}
	recs = recs[:len(recs)-5000]
	write(7)
	write(limit) // past the segment's size: no zeros after it
}
