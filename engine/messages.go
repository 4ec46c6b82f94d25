package engine

import (
	bolt "go.etcd.io/bbolt"
)

// unitMessages lays out one append unit (one request body) as data entries starting at
// off: a single message for non-JSON streams, one per flattened message for JSON streams
// (canonical bytes: compact JSON + "\n", D3). The last message carries flagUnitEnd.
func unitMessages(off uint64, body []byte, jsonMsgs [][]byte, isJSON bool) []cachedMsg {
	if !isJSON {
		buf := make([]byte, 1+len(body))
		buf[0] = flagUnitEnd
		copy(buf[1:], body)
		return []cachedMsg{{off: off, buf: buf}}
	}
	out := make([]cachedMsg, len(jsonMsgs))
	for i, m := range jsonMsgs {
		buf := make([]byte, 1+len(m)+1)
		copy(buf[1:], m)
		buf[len(buf)-1] = '\n'
		if i == len(jsonMsgs)-1 {
			buf[0] = flagUnitEnd
		}
		out[i] = cachedMsg{off: off, buf: buf}
		off += uint64(len(m) + 1)
	}
	return out
}

// unitBytes is the number of canonical bytes of msgs.
func unitBytes(msgs []cachedMsg) uint64 {
	var n uint64
	for _, m := range msgs {
		n += m.size()
	}
	return n
}

// putMessages writes messages, and for JSON streams their record index entries starting
// at ordinal rec (extension §6.1).
func putMessages(tx *bolt.Tx, sid uint64, msgs []cachedMsg, isJSON bool, rec uint64) error {
	data := tx.Bucket(bktData)
	for _, m := range msgs {
		if err := data.Put(posKey(sid, m.off), m.buf); err != nil {
			return err
		}
	}
	if !isJSON {
		return nil
	}
	records := tx.Bucket(bktRecords)
	for i, m := range msgs {
		if err := records.Put(posKey(sid, rec+uint64(i)), u64(m.off)); err != nil {
			return err
		}
	}
	return nil
}
