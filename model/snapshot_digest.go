package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// SnapshotDigest is the digest of a snapshot as Stream-Snapshot-Digest carries it (D5):
// "sha256:" and the lower-case hex SHA-256 of the 8-byte little-endian length of the
// normalized media type, the media type, and the body. Stream-Snapshot-Match compares
// it exactly (extension §2.2).
func SnapshotDigest(mediaType string, body []byte) string {
	h := sha256.New()
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(mediaType))))
	h.Write([]byte(mediaType))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
