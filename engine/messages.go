package engine

import "github.com/dsd-project/dsd/engine/storage"

// unitMessages lays out one append unit (one request body) as data entries starting at
// off: a single message for non-JSON streams, one per flattened message for JSON streams
// (canonical bytes: compact JSON + "\n", D3). The last message carries storage.FlagUnitEnd.
func unitMessages(off uint64, body []byte, jsonMsgs [][]byte, isJSON bool) []cachedMsg {
	return appendUnitMessages(nil, off, body, nil, jsonMsgs, isJSON)
}

// appendUnitMessages is unitMessages appending to dst (whose spare capacity it uses). A
// non-JSON body's message is frame when that is body with one spare byte in front
// (AppendRequest.Frame), else a copy.
func appendUnitMessages(dst []cachedMsg, off uint64, body, frame []byte, jsonMsgs [][]byte, isJSON bool) []cachedMsg {
	if !isJSON {
		buf := frame
		if len(body) == 0 || len(frame) != 1+len(body) || &frame[1] != &body[0] {
			buf = make([]byte, 1+len(body))
			copy(buf[1:], body)
		}
		buf[0] = storage.FlagUnitEnd
		return append(dst, cachedMsg{Off: off, Val: buf})
	}
	if dst == nil {
		dst = make([]cachedMsg, 0, len(jsonMsgs))
	}
	for i, m := range jsonMsgs {
		buf := make([]byte, 1+len(m)+1)
		copy(buf[1:], m)
		buf[len(buf)-1] = '\n'
		if i == len(jsonMsgs)-1 {
			buf[0] = storage.FlagUnitEnd
		}
		dst = append(dst, cachedMsg{Off: off, Val: buf})
		off += uint64(len(m) + 1)
	}
	return dst
}

// unitBytes is the number of canonical bytes of msgs.
func unitBytes(msgs []cachedMsg) uint64 {
	var n uint64
	for _, m := range msgs {
		n += m.Size()
	}
	return n
}
