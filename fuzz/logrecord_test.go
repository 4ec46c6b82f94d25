package fuzz

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"

	"github.com/dsd-project/dsd/engine/boltstore"
	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
)

// frame wraps a payload as a group-log record: u32 length, u32 CRC-32C, payload (little
// endian), as engine/boltstore's package doc describes it.
func frame(payload []byte) []byte {
	b := make([]byte, 8, 8+len(payload))
	binary.LittleEndian.PutUint32(b, uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, payload...)
}

// logSeedGroups are groups of every change kind, as the engine builds them.
func logSeedGroups() [][]storage.Change {
	ttl, exp, drop := uint64(60), int64(1700000000000), uint64(7)
	meta := &storage.Meta{ID: 3, Bucket: "bk", Stream: "s", ContentType: "application/json", MediaType: "application/json",
		TTL: &ttl, ExpiresMs: &exp, Tail: 12, Closed: true, Closer: &model.Producer{ID: "p", Epoch: 1, Seq: 2},
		Attrs: []byte(`{"a":1}`), Fork: &storage.Fork{SourceID: 2, Anchor: 4, Chain: []storage.Segment{{SID: 2, To: 4}}}}
	msg := func(off uint64, s string) storage.Message {
		return storage.Message{Off: off, Val: append([]byte{storage.FlagUnitEnd}, s...)}
	}
	return [][]storage.Change{
		{{SID: 1, Messages: []storage.Message{msg(0, "hello")}}},
		{{SID: 1, Messages: []storage.Message{msg(5, "a"), msg(6, "b")}, Records: true, FirstRecord: 9,
			Producer: &storage.ProducerPut{ID: "p", State: &storage.ProducerState{Epoch: 1, LastSeq: 4,
				Receipts: []storage.Receipt{{Seq: 4, End: 7, RecStart: 9, RecNext: 11}}},
				Receipt: &storage.Receipt{Seq: 4, End: 7, RecStart: 9, RecNext: 11}}},
			{SID: 2, Meta: meta, Also: []*storage.Meta{meta}}},
		{{SID: 3, Bind: &storage.Binding{Name: "bk/s", Bucket: "bk", SID: 3}, Meta: meta,
			PutSnapshot: &storage.SnapshotBody{Offset: 4, Body: []byte("snap")}, DropSnapshot: &drop, Retained: true},
			{Unbind: []storage.Binding{{Name: "bk/t", Bucket: "bk", SID: 2}},
				Bucket: &storage.BucketPut{ID: "bk", Record: &storage.BucketRecord{CreatedMs: -5, Streams: 2}}},
			{Bucket: &storage.BucketPut{ID: "gone"}, Subs: []storage.KVPut{
				{Space: storage.SpaceSubs, Key: []byte("bk\x00s1"), Value: []byte("{}")},
				{Space: storage.SpaceLinks, Key: []byte("bk\x00s1\x00"), Prefix: true},
				{Space: storage.SpaceKeys, Key: []byte("sign_keys")}}}},
		{},
	}
}

// The group log's record decoder (engine/boltstore, issue 19): any payload either is
// refused or decodes to a group that encodes back to the same bytes (the encoding is
// canonical) and decodes again to the same group; a decoded record is as long as its
// frame; a damaged frame (length, checksum) is refused. Never a panic.
func FuzzLogRecord(f *testing.F) {
	for _, g := range logSeedGroups() {
		f.Add(boltstore.EncodeLogRecord(g)[8:])
	}
	f.Add([]byte{1})
	f.Add([]byte{2, 0})
	f.Add([]byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		rec := frame(payload)
		g1, n, err := boltstore.DecodeLogRecord(rec)
		if err != nil {
			return
		}
		if n != len(rec) {
			t.Fatalf("decoded %d bytes of a %d-byte record", n, len(rec))
		}
		again := boltstore.EncodeLogRecord(g1)
		g2, _, err := boltstore.DecodeLogRecord(again)
		if err != nil {
			t.Fatalf("re-encoded record refused: %v", err)
		}
		if !reflect.DeepEqual(g1, g2) {
			t.Fatalf("round trip changed the group:\n%+v\n%+v", g1, g2)
		}
		if !bytes.Equal(boltstore.EncodeLogRecord(g2), again) {
			t.Fatal("encoding is not canonical")
		}
		bad := bytes.Clone(rec)
		bad[4] ^= 1
		if _, _, err := boltstore.DecodeLogRecord(bad); err == nil {
			t.Fatal("a record with a wrong checksum decoded")
		}
		if _, _, err := boltstore.DecodeLogRecord(rec[:len(rec)-1]); err == nil {
			t.Fatal("a record cut short decoded")
		}
	})
}

// Every seed group survives its record exactly: every Change field the engine sets.
func TestLogRecordRoundTrip(t *testing.T) {
	for i, g := range logSeedGroups() {
		got, _, err := boltstore.DecodeLogRecord(boltstore.EncodeLogRecord(g))
		if err != nil {
			t.Fatalf("group %d: %v", i, err)
		}
		if len(g) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, g) {
			t.Fatalf("group %d:\n got %+v\nwant %+v", i, got, g)
		}
	}
}
