package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/dsd-project/dsd/engine/storage"
)

// The group log's record: u32 payload length | u32 CRC-32C of the payload | payload, all
// little-endian. The payload is a version byte (logVersion) and the group: a uvarint count
// of changes, then each change as a uvarint mask of its present parts followed by those
// parts in the order of storage.Change's fields. Integers are uvarints (signed ones
// zig-zag varints), strings and byte strings a uvarint length and the bytes; metas are
// their data-file JSON (encodeMeta), so a meta field added later needs no new version.
const (
	logVersion  = 1
	frameHeader = 8
	// maxRecord bounds one record's payload: a longer length is damage, not a group.
	maxRecord = 1 << 30
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errRecord is a log record that does not decode.
var errRecord = errors.New("boltstore: malformed log record")

// The parts of a change present in a record (its mask).
const (
	hasBind = 1 << iota
	hasPutSnapshot
	hasDropSnapshot
	hasMessages
	hasRecords
	hasProducer
	hasProducerState
	hasReceipt
	hasRetained
	hasUnbind
	hasBucket
	hasBucketRecord
	hasSubs
	hasMeta
	hasAlso
	maskAll = hasAlso<<1 - 1
)

// The kinds of a KVPut.
const (
	kvDelete = iota
	kvPut
	kvPrefix
)

// appendFrame appends the framed record of group to buf.
func appendFrame(buf []byte, group []storage.Change) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, frameHeader)...)
	buf = append(buf, logVersion)
	buf = encodeGroup(buf, group)
	payload := buf[start+frameHeader:]
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, crcTable))
	return buf
}

func encodeGroup(b []byte, group []storage.Change) []byte {
	b = binary.AppendUvarint(b, uint64(len(group)))
	for i := range group {
		b = encodeChange(b, &group[i])
	}
	return b
}

func changeMask(c *storage.Change) uint64 {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(hasBind, c.Bind != nil)
	set(hasPutSnapshot, c.PutSnapshot != nil)
	set(hasDropSnapshot, c.DropSnapshot != nil)
	set(hasMessages, len(c.Messages) > 0)
	set(hasRecords, c.Records)
	set(hasProducer, c.Producer != nil)
	set(hasProducerState, c.Producer != nil && c.Producer.State != nil)
	set(hasReceipt, c.Producer != nil && c.Producer.Receipt != nil)
	set(hasRetained, c.Retained)
	set(hasUnbind, len(c.Unbind) > 0)
	set(hasBucket, c.Bucket != nil)
	set(hasBucketRecord, c.Bucket != nil && c.Bucket.Record != nil)
	set(hasSubs, len(c.Subs) > 0)
	set(hasMeta, c.Meta != nil)
	set(hasAlso, len(c.Also) > 0)
	return m
}

func encodeChange(b []byte, c *storage.Change) []byte {
	mask := changeMask(c)
	b = binary.AppendUvarint(b, mask)
	b = binary.AppendUvarint(b, c.SID)
	if c.Bind != nil {
		b = encodeBinding(b, *c.Bind)
	}
	if p := c.PutSnapshot; p != nil {
		b = binary.AppendUvarint(b, p.Offset)
		b = appendBytes(b, p.Body)
	}
	if c.DropSnapshot != nil {
		b = binary.AppendUvarint(b, *c.DropSnapshot)
	}
	if len(c.Messages) > 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Messages)))
		for _, m := range c.Messages {
			b = binary.AppendUvarint(b, m.Off)
			b = appendBytes(b, m.Val)
		}
	}
	if c.Records {
		b = binary.AppendUvarint(b, c.FirstRecord)
	}
	if p := c.Producer; p != nil {
		b = appendBytes(b, []byte(p.ID))
		if st := p.State; st != nil {
			b = binary.AppendUvarint(b, st.Epoch)
			b = binary.AppendUvarint(b, st.LastSeq)
			b = binary.AppendUvarint(b, uint64(len(st.Receipts)))
			for i := range st.Receipts {
				b = encodeReceiptV(b, &st.Receipts[i])
			}
		}
		if p.Receipt != nil {
			b = encodeReceiptV(b, p.Receipt)
		}
	}
	if len(c.Unbind) > 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Unbind)))
		for _, u := range c.Unbind {
			b = encodeBinding(b, u)
		}
	}
	if bk := c.Bucket; bk != nil {
		b = appendBytes(b, []byte(bk.ID))
		if r := bk.Record; r != nil {
			b = binary.AppendVarint(b, r.CreatedMs)
			b = binary.AppendVarint(b, int64(r.Streams))
		}
	}
	if len(c.Subs) > 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Subs)))
		for _, kv := range c.Subs {
			b = encodeKV(b, kv)
		}
	}
	if c.Meta != nil {
		b = appendBytes(b, encodeMeta(c.Meta))
	}
	if len(c.Also) > 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Also)))
		for _, m := range c.Also {
			b = appendBytes(b, encodeMeta(m))
		}
	}
	return b
}

func encodeBinding(b []byte, x storage.Binding) []byte {
	b = appendBytes(b, []byte(x.Name))
	b = appendBytes(b, []byte(x.Bucket))
	return binary.AppendUvarint(b, x.SID)
}

func encodeReceiptV(b []byte, r *storage.Receipt) []byte {
	b = binary.AppendUvarint(b, r.Seq)
	b = binary.AppendUvarint(b, r.End)
	b = binary.AppendUvarint(b, r.RecStart)
	return binary.AppendUvarint(b, r.RecNext)
}

func encodeKV(b []byte, kv storage.KVPut) []byte {
	kind := kvPut
	switch {
	case kv.Prefix:
		kind = kvPrefix
	case kv.Value == nil:
		kind = kvDelete
	}
	b = append(b, byte(kind))
	b = appendBytes(b, []byte(kv.Space))
	b = appendBytes(b, kv.Key)
	if kind == kvPut {
		b = appendBytes(b, kv.Value)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// EncodeLogRecord returns group as one framed group-log record (the fuzz targets).
func EncodeLogRecord(group []storage.Change) []byte { return appendFrame(nil, group) }

// DecodeLogRecord decodes the framed record at the start of b: its group (byte slices
// alias b) and its size in bytes. Errors: a short, mis-sized, mis-checksummed or
// malformed record.
func DecodeLogRecord(b []byte) ([]storage.Change, int, error) { return readRecord(b) }

// decodePayload decodes a record's payload (version byte and group). The changes'
// byte slices alias p. Errors: errRecord (wrapped with what is wrong).
func decodePayload(p []byte) ([]storage.Change, error) {
	if len(p) == 0 || p[0] != logVersion {
		return nil, fmt.Errorf("%w: unknown version", errRecord)
	}
	d := &decoder{b: p[1:]}
	group := items(d, d.count(2), d.change)
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return group, nil
}

// decoder reads a payload; the first failure sticks and later reads return zeros.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errRecord, what)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 { return integer(d, binary.Uvarint) }
func (d *decoder) varint() int64   { return integer(d, binary.Varint) }

// integer reads one integer with read (binary.Uvarint or binary.Varint).
func integer[T int64 | uint64](d *decoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail("bad integer")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// items reads n items with read, stopping at the first failure (nil when n is 0).
func items[T any](d *decoder, n uint64, read func() T) []T {
	var out []T
	if n > 0 {
		out = make([]T, 0, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, read())
	}
	return out
}

// count reads a count of items of at least min bytes each: more than the bytes left hold
// is damage.
func (d *decoder) count(min int) uint64 {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail("count beyond the record")
		return 0
	}
	return n
}

// list reads the count of a part present in the mask: at least one item (an empty list
// is encoded by leaving the part out).
func (d *decoder) list(min int) uint64 {
	n := d.count(min)
	if n == 0 {
		d.fail("empty list")
	}
	return n
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("length beyond the record")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1() byte {
	if len(d.b) == 0 {
		d.fail("short record")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) change() storage.Change {
	mask := d.uvarint()
	if mask&^maskAll != 0 {
		d.fail("unknown change parts")
	}
	c := storage.Change{SID: d.uvarint()}
	if mask&hasBind != 0 {
		b := d.binding()
		c.Bind = &b
	}
	if mask&hasPutSnapshot != 0 {
		off := d.uvarint()
		body := append([]byte{}, d.bytes()...)
		c.PutSnapshot = &storage.SnapshotBody{Offset: off, Body: body}
	}
	if mask&hasDropSnapshot != 0 {
		off := d.uvarint()
		c.DropSnapshot = &off
	}
	if mask&hasMessages != 0 {
		n := d.list(2)
		c.Messages = make([]storage.Message, 0, n)
		for i := uint64(0); i < n; i++ {
			m := storage.Message{Off: d.uvarint(), Val: d.bytes()}
			if len(m.Val) == 0 && d.err == nil {
				d.fail("message without flags byte")
			}
			c.Messages = append(c.Messages, m)
		}
	}
	if mask&hasRecords != 0 {
		c.Records, c.FirstRecord = true, d.uvarint()
	}
	if mask&hasProducer != 0 {
		c.Producer = d.producer(mask)
	} else if mask&(hasProducerState|hasReceipt) != 0 {
		d.fail("producer parts without a producer")
	}
	c.Retained = mask&hasRetained != 0
	if mask&hasUnbind != 0 {
		c.Unbind = items(d, d.list(3), d.binding)
	}
	if mask&hasBucket != 0 {
		c.Bucket = &storage.BucketPut{ID: string(d.bytes())}
		if mask&hasBucketRecord != 0 {
			c.Bucket.Record = &storage.BucketRecord{CreatedMs: d.varint(), Streams: int(d.varint())}
		}
	} else if mask&hasBucketRecord != 0 {
		d.fail("bucket record without a bucket")
	}
	if mask&hasSubs != 0 {
		c.Subs = items(d, d.list(3), d.kv)
	}
	if mask&hasMeta != 0 {
		c.Meta = d.meta()
	}
	if mask&hasAlso != 0 {
		c.Also = items(d, d.list(1), d.meta)
	}
	return c
}

func (d *decoder) binding() storage.Binding {
	return storage.Binding{Name: string(d.bytes()), Bucket: string(d.bytes()), SID: d.uvarint()}
}

func (d *decoder) receipt() storage.Receipt {
	return storage.Receipt{Seq: d.uvarint(), End: d.uvarint(), RecStart: d.uvarint(), RecNext: d.uvarint()}
}

func (d *decoder) producer(mask uint64) *storage.ProducerPut {
	p := &storage.ProducerPut{ID: string(d.bytes())}
	if mask&hasProducerState != 0 {
		st := &storage.ProducerState{Epoch: d.uvarint(), LastSeq: d.uvarint()}
		st.Receipts = items(d, d.count(4), d.receipt)
		p.State = st
	}
	if mask&hasReceipt != 0 {
		r := d.receipt()
		p.Receipt = &r
	}
	return p
}

func (d *decoder) kv() storage.KVPut {
	kind := d.byte1()
	kv := storage.KVPut{Space: string(d.bytes()), Key: append([]byte{}, d.bytes()...)}
	switch kind {
	case kvPut:
		kv.Value = append([]byte{}, d.bytes()...)
	case kvPrefix:
		kv.Prefix = true
	case kvDelete:
	default:
		d.fail("unknown key write")
	}
	return kv
}

func (d *decoder) meta() *storage.Meta {
	v := d.bytes()
	if d.err != nil {
		return nil
	}
	m, err := decodeMeta(v)
	if err != nil {
		d.fail("bad meta: " + err.Error())
		return nil
	}
	return m
}
