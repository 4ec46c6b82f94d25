package boltstore

// The layout's helpers, for the damage tests of package boltstore_test.
var (
	BktNames, BktMeta, BktData, BktRecords = bktNames, bktMeta, bktData, bktRecords
	BktSnaps, BktRcpts, BktBuckets         = bktSnaps, bktRcpts, bktBuckets
	PosKey, SidKey, U64, GetU64            = posKey, sidKey, u64, getU64
	DecodeMeta, EncodeMeta                 = decodeMeta, encodeMeta
)

// FillZeros writes the log's zeros ahead now, as the zeroer does in the background.
func FillZeros(s *Store) {
	for s.log.zero.fill() {
	}
}
