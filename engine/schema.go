package engine

import "encoding/binary"

// The on-disk layout. This file is the only place that names bbolt buckets and encodes
// keys. All integers are big-endian so that cursor order is numeric order.
//
//	system   "format" -> formatVersion; "next_sid" -> uint64 (last stream id handed out)
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
//
// subs and links were added without a format change: opening an older file creates them.
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
	keySignKeys = []byte("sign_keys")
)

// Flags of a data entry (its first byte).
const (
	flagUnitEnd byte = 1 << 0 // the last message of one append unit (one POST or PUT body)
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
