package boltstore

import (
	"encoding/binary"
	"encoding/json"

	"github.com/dsd-project/dsd/engine/storage"
)

// The on-disk layout. This file is the only place that names bbolt buckets and encodes
// keys and values. All integers are big-endian so that cursor order is numeric order.
//
//	system   "format" -> formatVersion; "next_sid" -> uint64 (last stream id handed out);
//	         "probe" -> Unix ms of the last probe commit after a storage failure (D4)
//	buckets  bucket_id -> bucketRecord (JSON)
//	names    "{bucket}/{stream}" -> sid (uint64): the live incarnation bound to a path
//	meta     sid -> streamMeta (JSON)
//	data     sid | offset -> flags byte | message bytes   (one entry per message, D3)
//	records  sid | ordinal -> offset                       (JSON streams, extension §6)
//	prods    sid | producer id -> producerState (JSON)
//	snaps    sid | offset -> snapshot body                 (the visible snapshot; a superseded
//	         one until its successor is published)
//	trash    sid -> trashRecord (JSON): storage to free in the background
//	trim     sid -> empty: data below the stream's retention boundary to free
//	rcpts    sid | u16 len | producer id | epoch | seq -> end | record start | record next
//	         (JSON streams: the acknowledgement of every accepted producer append)
//	subs     "{bucket}\x00{sub id}" -> subRecord (JSON): configuration, incarnation, delivery
//	         state, tombstone (base protocol §6-§7, D10)
//	links    "{bucket}\x00{sub id}\x00{path}" -> linkRecord (JSON): a cursor of one link
//	system   "sign_keys" -> subs.Keys (JSON): webhook signing keys and the token key
//	system   "log_pos" -> u64 segment | u64 offset: the group log position applied (store.go)
//
// subs, links and log_pos were added without a format change: opening an older file
// creates them (log_pos at the first checkpoint).
const formatVersion = "dsd-2"

var (
	bktSystem  = []byte("system")
	bktBuckets = []byte("buckets")
	bktNames   = []byte("names")
	bktMeta    = []byte("meta")
	bktData    = []byte("data")
	bktRecords = []byte("records")
	bktProds   = []byte("prods")
	bktSnaps   = []byte("snaps")
	bktTrash   = []byte("trash")
	bktTrim    = []byte("trim")
	bktRcpts   = []byte("rcpts")
	bktSubs    = []byte("subs")
	bktLinks   = []byte("links")

	allBuckets = [][]byte{bktSystem, bktBuckets, bktNames, bktMeta, bktData, bktRecords,
		bktProds, bktSnaps, bktTrash, bktTrim, bktRcpts, bktSubs, bktLinks}

	keyFormat   = []byte("format")
	keyNextSID  = []byte("next_sid")
	keyProbe    = []byte("probe")
	keySignKeys = []byte("sign_keys")
	keyLogPos   = []byte("log_pos")
)

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func getU64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// sidKey is the 8-byte prefix of every per-stream key.
func sidKey(sid uint64) []byte { return u64(sid) }

// posKey is sid | pos: the key of a data entry (pos = offset) or record (pos = ordinal).
func posKey(sid, pos uint64) []byte {
	var b [16]byte
	return putPosKey(&b, sid, pos)
}

// putPosKey writes the posKey of sid, pos into b and returns it (no allocation).
func putPosKey(b *[16]byte, sid, pos uint64) []byte {
	binary.BigEndian.PutUint64(b[:8], sid)
	binary.BigEndian.PutUint64(b[8:], pos)
	return b[:]
}

// splitPosKey decodes a posKey.
func splitPosKey(k []byte) (sid, pos uint64) {
	return binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint64(k[8:16])
}

// snapKey is sid | offset: the key of a snapshot body.
func snapKey(sid, off uint64) []byte { return posKey(sid, off) }

// rcptKey is sid | u16 length | producer id | epoch | seq.
func rcptKey(sid uint64, id string, epoch, seq uint64) []byte {
	b := make([]byte, 8+2+len(id)+16)
	binary.BigEndian.PutUint64(b, sid)
	binary.BigEndian.PutUint16(b[8:], uint16(len(id)))
	copy(b[10:], id)
	binary.BigEndian.PutUint64(b[10+len(id):], epoch)
	binary.BigEndian.PutUint64(b[18+len(id):], seq)
	return b
}

// prodKey is sid | producer id.
func prodKey(sid uint64, id string) []byte {
	b := make([]byte, 8+len(id))
	binary.BigEndian.PutUint64(b, sid)
	copy(b[8:], id)
	return b
}

// trashRecord marks an incarnation whose storage is freed in the background.
type trashRecord struct {
	Since int64 `json:"since"`
}

// Values: metas, producer states and bucket records are JSON; a receipt is end | record
// start | record next (3 x u64).

func encodeMeta(m *storage.Meta) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("boltstore: encode meta: " + err.Error())
	}
	return b
}

func decodeMeta(b []byte) (*storage.Meta, error) {
	m := new(storage.Meta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

func encodeJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func encodeReceipt(r *storage.Receipt) []byte {
	var v [24]byte
	binary.BigEndian.PutUint64(v[0:], r.End)
	binary.BigEndian.PutUint64(v[8:], r.RecStart)
	binary.BigEndian.PutUint64(v[16:], r.RecNext)
	return v[:]
}

func decodeReceipt(seq uint64, v []byte) (storage.Receipt, bool) {
	if len(v) != 24 {
		return storage.Receipt{}, false
	}
	return storage.Receipt{Seq: seq, End: getU64(v), RecStart: getU64(v[8:]), RecNext: getU64(v[16:])}, true
}

func decodeBucket(v []byte) (*storage.BucketRecord, error) {
	rec := new(storage.BucketRecord)
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

func decodeProducer(v []byte) (*storage.ProducerState, error) {
	st := new(storage.ProducerState)
	if err := json.Unmarshal(v, st); err != nil {
		return nil, err
	}
	return st, nil
}
