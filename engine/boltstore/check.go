package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// CheckReport is what CheckFile found.
type CheckReport struct {
	Buckets, Streams, Incarnations int
	// Logged counts the groups of the group log beside the file (LogDir) not yet in it:
	// the next Open replays them. LoggedTorn is set when the log ends in a record cut
	// short (a commit never acknowledged, cut off at the next Open).
	Logged     int
	LoggedTorn bool
	// Problems lists the damage found, at most maxProblems entries; empty when sound.
	Problems []string
}

const maxProblems = 100

// CheckFile verifies a data file that no process has open (a stopped server's, or a
// copy from Store.Backup): bbolt's own consistency check, then dsd's invariants per
// incarnation: its data entries form a gapless chain up to its tail from its retention
// boundary, the record index of a JSON stream maps consecutive ordinals to increasing
// message offsets, producer states and receipts lie within the stream, the visible
// snapshot's body is stored with its size and digest, every name, fork source and bucket
// count agrees, and no storage belongs to an unknown incarnation. The error is for a file
// that cannot be read at all (missing, not bbolt, in use: ErrLocked). When the file is a
// data directory's FileName, the group log beside it (LogDir, which Open would replay into
// it) is read too: a damaged record followed by more data is a problem (ErrLogCorrupt);
// the groups it holds are counted in Logged. A file of another name (a copy) has no log.
func CheckFile(path string) (CheckReport, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return CheckReport{}, fmt.Errorf("%w (%s): check a copy (dsd backup) or stop the server", ErrLocked, path)
	}
	if err != nil {
		return CheckReport{}, fmt.Errorf("engine: open %s: %w", path, err)
	}
	defer db.Close()
	var c checker
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			c.addf("bbolt: %v", err)
		}
		if len(c.rep.Problems) > 0 {
			return nil // dsd's invariants mean little on a broken B+tree
		}
		c.tx = tx
		if err := c.run(); err != nil {
			return err
		}
		if filepath.Base(path) == FileName {
			c.checkLog(filepath.Join(filepath.Dir(path), LogDir))
		}
		return nil
	})
	return c.rep, err
}

// checkLog scans the group log after the file's stored position.
func (c *checker) checkLog(dir string) {
	from, ok := parseLogPos(c.tx.Bucket(bktSystem).Get(keyLogPos))
	if !ok && c.tx.Bucket(bktSystem).Get(keyLogPos) != nil {
		c.addf("group log position: malformed")
		return
	}
	sc, err := scanLog(dir, from)
	if err != nil {
		c.addf("group log: %v", err)
		return
	}
	c.rep.Logged, c.rep.LoggedTorn = len(sc.groups), sc.torn != nil
}

// checker walks one read transaction.
type checker struct {
	tx    *bolt.Tx
	rep   CheckReport
	metas map[uint64]*storage.Meta
	trash map[uint64]bool
}

func (c *checker) addf(format string, args ...any) {
	if len(c.rep.Problems) < maxProblems {
		c.rep.Problems = append(c.rep.Problems, fmt.Sprintf(format, args...))
	} else if len(c.rep.Problems) == maxProblems {
		c.rep.Problems = append(c.rep.Problems, "... (more problems not listed)")
	}
}

func (c *checker) run() error {
	for _, name := range allBuckets {
		if c.tx.Bucket(name) == nil {
			c.addf("bucket %q of the layout is missing (not a dsd data file?)", name)
		}
	}
	if len(c.rep.Problems) > 0 {
		return nil
	}
	if v := c.tx.Bucket(bktSystem).Get(keyFormat); string(v) != formatVersion {
		c.addf("format %q, this build reads %q", v, formatVersion)
		return nil
	}
	if err := c.loadMetas(); err != nil {
		return err
	}
	c.checkNames()
	for sid, m := range c.metas {
		c.checkData(sid, m)
		if model.IsJSON(m.MediaType) {
			c.checkRecords(sid, m)
		}
		c.checkProducers(sid, m)
		c.checkSnapshot(sid, m)
		if m.Fork != nil {
			for _, sg := range m.Fork.Chain {
				if c.metas[sg.SID] == nil {
					c.addf("stream %d (%s/%s): fork source %d is gone", sid, m.Bucket, m.Stream, sg.SID)
				}
			}
		}
	}
	c.checkOrphans()
	return nil
}

// loadMetas reads every incarnation (tails derived as loadMeta does) and the trash.
func (c *checker) loadMetas() error {
	c.metas, c.trash = map[uint64]*storage.Meta{}, map[uint64]bool{}
	var next uint64
	if v := c.tx.Bucket(bktSystem).Get(keyNextSID); v != nil {
		next = getU64(v)
	}
	err := c.tx.Bucket(bktMeta).ForEach(func(k, v []byte) error {
		sid := getU64(k)
		m, err := loadMeta(c.tx, view{}, sid)
		if err != nil {
			c.addf("stream %d: meta does not decode: %v", sid, err)
			return nil
		}
		if m.ID != sid {
			c.addf("stream %d: meta says id %d", sid, m.ID)
		}
		if sid > next {
			c.addf("stream %d: above next_sid %d", sid, next)
		}
		c.metas[sid] = m
		return nil
	})
	if err != nil {
		return err
	}
	c.rep.Incarnations = len(c.metas)
	return c.tx.Bucket(bktTrash).ForEach(func(k, _ []byte) error {
		c.trash[getU64(k)] = true
		return nil
	})
}

// checkNames checks that names point at incarnations of that name, and the buckets'
// counts of bound names.
func (c *checker) checkNames() {
	perBucket := map[string]int{}
	_ = c.tx.Bucket(bktNames).ForEach(func(k, v []byte) error {
		c.rep.Streams++
		name := string(k)
		m := c.metas[getU64(v)]
		switch {
		case m == nil:
			c.addf("name %q: bound to stream %d, which has no meta", name, getU64(v))
		case m.Key() != name:
			c.addf("name %q: bound to stream %d of %s/%s", name, m.ID, m.Bucket, m.Stream)
		default:
			perBucket[m.Bucket]++
		}
		return nil
	})
	_ = c.tx.Bucket(bktBuckets).ForEach(func(k, v []byte) error {
		c.rep.Buckets++
		rec, err := decodeBucket(v)
		if err != nil {
			c.addf("bucket %q: record does not decode: %v", k, err)
		} else if rec.Streams != perBucket[string(k)] {
			c.addf("bucket %q: counts %d streams, %d names are bound in it", k, rec.Streams, perBucket[string(k)])
		}
		delete(perBucket, string(k))
		return nil
	})
	for b, n := range perBucket {
		c.addf("bucket %q: %d streams bound in it, but no bucket record", b, n)
	}
}

// checkData checks the own segment's data: a gapless chain of entries ending at the tail
// and covering the retained range.
func (c *checker) checkData(sid uint64, m *storage.Meta) {
	own := ownStart(m)
	first, next, n := uint64(0), uint64(0), 0
	cur := c.tx.Bucket(bktData).Cursor()
	for k, v := cur.Seek(posKey(sid, 0)); k != nil && len(k) == 16 && getU64(k) == sid; k, v = cur.Next() {
		_, off := splitPosKey(k)
		if len(v) == 0 {
			c.addf("stream %d: data entry at %d has no flags byte", sid, off)
			return
		}
		if n == 0 {
			first = off
		} else if off != next {
			c.addf("stream %d: data gap: an entry ends at %d, the next starts at %d", sid, next, off)
			return
		}
		next, n = off+uint64(len(v)-1), n+1
	}
	switch {
	case n == 0 && m.Tail > max(own, m.RetainedFrom):
		c.addf("stream %d: tail %d but no data stored from %d", sid, m.Tail, max(own, m.RetainedFrom))
	case n > 0 && first < own:
		c.addf("stream %d: data at %d, before its own segment starts at %d", sid, first, own)
	case n > 0 && first > max(own, m.RetainedFrom):
		c.addf("stream %d: data starts at %d, its retained range at %d", sid, first, max(own, m.RetainedFrom))
	case n > 0 && next != m.Tail:
		c.addf("stream %d: data ends at %d, tail %d", sid, next, m.Tail)
	}
}

// checkRecords checks a JSON stream's record index: consecutive ordinals up to
// RecordNext, mapped to increasing offsets below the tail that start data entries.
func (c *checker) checkRecords(sid uint64, m *storage.Meta) {
	data := c.tx.Bucket(bktData)
	var prevRec, prevOff uint64
	n := 0
	cur := c.tx.Bucket(bktRecords).Cursor()
	for k, v := cur.Seek(posKey(sid, 0)); k != nil && len(k) == 16 && getU64(k) == sid; k, v = cur.Next() {
		_, r := splitPosKey(k)
		if len(v) != 8 {
			c.addf("stream %d: record %d: index entry of %d bytes", sid, r, len(v))
			return
		}
		off := getU64(v)
		switch {
		case n > 0 && r != prevRec+1:
			c.addf("stream %d: record index gap after record %d (next %d)", sid, prevRec, r)
			return
		case n > 0 && off <= prevOff:
			c.addf("stream %d: record %d at %d, not after record %d at %d", sid, r, off, prevRec, prevOff)
			return
		case off >= m.Tail:
			c.addf("stream %d: record %d at %d, at or past the tail %d", sid, r, off, m.Tail)
			return
		case off >= m.RetainedFrom && data.Get(posKey(sid, off)) == nil:
			c.addf("stream %d: record %d at %d, where no message starts", sid, r, off)
			return
		}
		prevRec, prevOff, n = r, off, n+1
	}
	if n > 0 && prevRec+1 != m.RecordNext {
		c.addf("stream %d: record index ends at %d, RecordNext %d", sid, prevRec+1, m.RecordNext)
	}
	if m.RecordFirst > m.RecordNext {
		c.addf("stream %d: RecordFirst %d beyond RecordNext %d", sid, m.RecordFirst, m.RecordNext)
	}
}

// checkProducers checks producer states and the stored receipts of sid.
func (c *checker) checkProducers(sid uint64, m *storage.Meta) {
	cur := c.tx.Bucket(bktProds).Cursor()
	for k, v := cur.Seek(sidKey(sid)); k != nil && len(k) >= 8 && getU64(k) == sid; k, v = cur.Next() {
		st, err := decodeProducer(v)
		if err != nil {
			c.addf("stream %d: producer %q: state does not decode: %v", sid, k[8:], err)
			continue
		}
		for _, r := range st.Receipts {
			if r.Seq > st.LastSeq || r.End > m.Tail {
				c.addf("stream %d: producer %q: receipt of seq %d (end %d) beyond seq %d or tail %d", sid, k[8:], r.Seq, r.End, st.LastSeq, m.Tail)
			}
		}
	}
	rc := c.tx.Bucket(bktRcpts).Cursor()
	for k, v := rc.Seek(sidKey(sid)); k != nil && len(k) >= 8 && getU64(k) == sid; k, v = rc.Next() {
		if len(v) != 24 || len(k) < 10 || len(k) != 10+int(binary.BigEndian.Uint16(k[8:10]))+16 {
			c.addf("stream %d: malformed receipt entry", sid)
			continue
		}
		end, rs, rn := getU64(v[0:]), getU64(v[8:]), getU64(v[16:])
		if end > m.Tail || rs > rn || rn > m.RecordNext {
			c.addf("stream %d: receipt (end %d, records %d..%d) beyond tail %d or RecordNext %d", sid, end, rs, rn, m.Tail, m.RecordNext)
		}
	}
}

// checkSnapshot checks that the visible snapshot's body is stored, with its size and
// digest.
func (c *checker) checkSnapshot(sid uint64, m *storage.Meta) {
	sn := m.Snapshot
	if sn == nil {
		return
	}
	body := c.tx.Bucket(bktSnaps).Get(snapKey(sid, sn.Offset))
	mt, err := model.MediaType(sn.ContentType)
	switch {
	case body == nil:
		c.addf("stream %d: snapshot at %d has no stored body", sid, sn.Offset)
	case int64(len(body)) != sn.Size:
		c.addf("stream %d: snapshot at %d: %d bytes stored, %d recorded", sid, sn.Offset, len(body), sn.Size)
	case err != nil || model.SnapshotDigest(mt, body) != sn.Digest:
		c.addf("stream %d: snapshot at %d: the body does not match its digest", sid, sn.Offset)
	case sn.Offset > m.Tail:
		c.addf("stream %d: snapshot at %d past the tail %d", sid, sn.Offset, m.Tail)
	}
}

// checkOrphans reports storage of incarnations that have neither a meta nor a trash
// record (the sweeper would never free it, and no stream reads it).
func (c *checker) checkOrphans() {
	for _, name := range [][]byte{bktData, bktRecords, bktProds, bktRcpts, bktSnaps} {
		cur := c.tx.Bucket(name).Cursor()
		for k, _ := cur.First(); k != nil; {
			if len(k) < 8 {
				c.addf("%s: key of %d bytes", name, len(k))
				k, _ = cur.Next()
				continue
			}
			sid := getU64(k)
			if c.metas[sid] == nil && !c.trash[sid] {
				c.addf("%s: entries of stream %d, which has no meta and is not in the trash", name, sid)
			}
			k, _ = cur.Seek(sidKey(sid + 1))
		}
	}
	_ = c.tx.Bucket(bktTrim).ForEach(func(k, _ []byte) error {
		if sid := getU64(k); c.metas[sid] == nil && !c.trash[sid] {
			c.addf("trim: mark of stream %d, which has no meta", sid)
		}
		return nil
	})
}

// ownStart is the first offset of an incarnation's own segment: its fork anchor, or 0.
func ownStart(m *storage.Meta) uint64 {
	if m.Fork != nil {
		return m.Fork.Anchor
	}
	return 0
}
