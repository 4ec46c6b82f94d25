package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dsd-project/dsd/engine/storage"
)

// LogDir is the group log's directory inside the data directory: segment files named
// by a 12-digit sequence number, "000000000001.seg", appended to in order.
const LogDir = "dsd.log"

const segSuffix = ".seg"

// ErrLogCorrupt: a log record that does not decode is followed by more data, so it is
// not a group whose write was cut short by a crash. Open refuses the data directory.
var ErrLogCorrupt = errors.New("boltstore: the group log is damaged")

// logPos is a position in the log: a segment and a byte offset in it. The data file
// stores the position up to which its groups are applied (keyLogPos).
type logPos struct{ seg, off uint64 }

func (p logPos) bytes() []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], p.seg)
	binary.BigEndian.PutUint64(b[8:], p.off)
	return b[:]
}

func parseLogPos(v []byte) (logPos, bool) {
	if len(v) != 16 {
		return logPos{}, false
	}
	return logPos{getU64(v), getU64(v[8:])}, true
}

// wal is the active segment the committer appends to. Only the committer (and Open and
// Close) use it.
type wal struct {
	dir    string
	noSync bool
	f      *os.File // nil until the first append
	pos    logPos   // the end of the last durable record
	buf    []byte
	broken error // a failed append whose bytes could not be cut off: appends fail
	zero   zeroer
	ended  edge // the checkpointer's, signalled after each append (quiet.go); nil: none
}

// groupEnded tells the checkpointer and the zeroer that the disk is free of groups for a
// moment.
func (w *wal) groupEnded() {
	w.ended.signal()
	w.zero.ended.signal()
}

func segName(seg uint64) string { return fmt.Sprintf("%012d%s", seg, segSuffix) }

// append writes group as one record with one write(2) and syncs it (not with noSync):
// the group is durable when it returns nil. A failed append is cut off the segment.
// Either way the group has ended then (groupEnded).
func (w *wal) append(group []storage.Change) (logPos, error) {
	pos, err := w.write(group)
	w.groupEnded()
	return pos, err
}

// write is append without the signal of the group's end.
func (w *wal) write(group []storage.Change) (logPos, error) {
	if w.broken != nil {
		return w.pos, w.broken
	}
	if w.f == nil {
		if err := w.create(); err != nil {
			return w.pos, err
		}
	}
	w.buf = appendFrame(w.buf[:0], group)
	err := w.zero.writeAt(w.buf, int64(w.pos.off))
	if err == nil && !w.noSync {
		err = fdatasync(w.f)
	}
	if err != nil {
		w.cut()
		return w.pos, fmt.Errorf("boltstore: write the group log: %w", err)
	}
	w.pos.off += uint64(len(w.buf))
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return w.pos, nil
}

// cut removes what a failed append may have left; when it cannot, the log refuses
// appends until repair succeeds (a probe).
func (w *wal) cut() {
	if err := w.zero.truncate(int64(w.pos.off)); err != nil {
		w.broken = fmt.Errorf("boltstore: cut a failed group off the log: %w", err)
		return
	}
	if !w.noSync {
		if err := w.f.Sync(); err != nil {
			w.broken = fmt.Errorf("boltstore: cut a failed group off the log: %w", err)
		}
	}
}

// repair retries cutting a failed append off the log.
func (w *wal) repair() error {
	if w.broken == nil {
		return nil
	}
	w.broken = nil
	w.cut()
	return w.broken
}

// create starts segment w.pos.seg at offset 0 and makes its name durable.
func (w *wal) create() error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(w.dir, segName(w.pos.seg)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("boltstore: create a log segment: %w", err)
	}
	if !w.noSync {
		if err := syncDir(w.dir); err != nil {
			f.Close()
			return err
		}
	}
	w.f, w.pos.off = f, 0
	w.zero.setFile(f)
	return nil
}

// rotate closes the active segment (its records are durable) so that the next append
// starts segment seg+1.
func (w *wal) rotate() {
	if w.f == nil {
		return
	}
	w.zero.setFile(nil)
	w.f.Close()
	w.f = nil
	w.pos = logPos{w.pos.seg + 1, 0}
}

func (w *wal) close() error {
	w.zero.halt()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// segments lists the sequence numbers of dir's segment files in order.
func segments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(name, 10, 64); err == nil {
			segs = append(segs, n)
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	return segs, nil
}

// removeBelow deletes the segments wholly below seg (their groups are in the data file).
func removeBelow(dir string, seg uint64) error {
	segs, err := segments(dir)
	if err != nil {
		return err
	}
	for _, n := range segs {
		if n >= seg {
			break
		}
		if err := os.Remove(filepath.Join(dir, segName(n))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// loggedGroup is one record a log scan found: its group, the log position after it and
// its size in bytes.
type loggedGroup struct {
	changes []storage.Change
	end     logPos
	size    int64
}

// scanned is what a log scan found after a position.
type scanned struct {
	groups []loggedGroup
	bytes  int64
	last   uint64 // the highest segment number present (0: none)
	// torn is the segment and offset of a record cut short at the very end of the last
	// segment (a group whose sync never returned); tornLen its bytes.
	torn    *logPos
	tornLen int64
}

// scanLog reads every record after from in dir. Zeros after the last segment's last
// record are the log's end (zeroer); a segment the log rolled over from ends at its last
// record (it reaches SegmentBytes, where the zeros stop), so zeros there are damage. A bad
// record in the last segment is torn when no whole record follows it (zeros may); any
// other bad record is ErrLogCorrupt, and so are a segment from.seg shorter than from.off
// (truncated or replaced: the groups the data file lacks are gone) and a gap in the
// numbers of the segments read (a segment lost).
func scanLog(dir string, from logPos) (scanned, error) {
	var sc scanned
	segs, err := segments(dir)
	if err != nil {
		return sc, err
	}
	prev := uint64(0) // the last segment read (0: none yet)
	for i, n := range segs {
		sc.last = n
		if n < from.seg {
			continue
		}
		if prev != 0 && n != prev+1 {
			return sc, fmt.Errorf("%w: segment %s is missing (%s follows %s)", ErrLogCorrupt, segName(prev+1), segName(n), segName(prev))
		}
		prev = n
		b, err := os.ReadFile(filepath.Join(dir, segName(n)))
		if err != nil {
			return sc, err
		}
		start := uint64(0)
		if n == from.seg {
			start = from.off
		}
		if err := sc.scanSegment(n, b, start, i == len(segs)-1); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

func (sc *scanned) scanSegment(seg uint64, b []byte, off uint64, last bool) error {
	if off > uint64(len(b)) {
		return fmt.Errorf("%w: the data file's log position is byte %d of segment %s, which has only %d bytes (truncated or replaced)",
			ErrLogCorrupt, off, segName(seg), len(b))
	}
	for off < uint64(len(b)) {
		group, n, err := readRecord(b[off:])
		if err == nil {
			off += uint64(n)
			sc.groups = append(sc.groups, loggedGroup{group, logPos{seg, off}, int64(n)})
			sc.bytes += int64(n)
			continue
		}
		rest := trimZeros(b[off:])
		if len(rest) == 0 && last {
			return nil // the zeros written ahead (zeroer): the end of the log
		}
		if last && tornTail(b[off:], len(rest)) {
			sc.torn, sc.tornLen = &logPos{seg, off}, int64(len(rest))
			return nil
		}
		return fmt.Errorf("%w: segment %s at byte %d: %v (more data follows, so it is not a write cut short)",
			ErrLogCorrupt, segName(seg), off, err)
	}
	return nil
}

// trimZeros returns b without its trailing zero bytes.
func trimZeros(b []byte) []byte {
	i := len(b)
	for i > 0 && b[i-1] == 0 {
		i--
	}
	return b[:i]
}

// readRecord decodes the record at the start of b and returns its size.
func readRecord(b []byte) ([]storage.Change, int, error) {
	if len(b) < frameHeader {
		return nil, 0, fmt.Errorf("%w: short header", errRecord)
	}
	n := binary.LittleEndian.Uint32(b)
	if n == 0 || n > maxRecord || uint64(n) > uint64(len(b)-frameHeader) {
		return nil, 0, fmt.Errorf("%w: length %d", errRecord, n)
	}
	payload := b[frameHeader : frameHeader+int(n)]
	if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", errRecord)
	}
	group, err := decodePayload(payload)
	if err != nil {
		return nil, 0, err
	}
	return group, frameHeader + int(n), nil
}

// tornTail reports whether a bad record at the start of b can be the last write cut
// short: no whole record starts anywhere after it. Records start in the first data bytes
// of b (a record past them would be all zeros), and they may end in the zeros after
// them: a record's own last bytes can be zeros. (A torn write leaves at most one group's
// bytes, so the search is short; on a damaged log it stops at the next record.)
func tornTail(b []byte, data int) bool {
	for i := 1; i < data && i+frameHeader < len(b); i++ {
		if _, _, err := readRecord(b[i:]); err == nil {
			return false
		}
	}
	return true
}
