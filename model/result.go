package model

import "time"

// Result is the response State.Apply decides for a command: the HTTP status, the
// protocol error of a 4xx (whose typed form carries its own headers: *ClosedError,
// *StaleEpochError, *SeqGapError), and the response headers and body that the protocol
// defines. Headers that are presentation only (Cache-Control, ETag, CORS, cursors) are
// not part of the model.
type Result struct {
	Status int
	Err    error // nil on 2xx

	ContentType string  // Content-Type of a stream (create, read, HEAD): as stored
	Location    bool    // a 201 create carries Location (B-5.1-13)
	NextOffset  *Offset // Stream-Next-Offset
	Closed      bool    // Stream-Closed: true
	UpToDate    bool    // Stream-Up-To-Date: true (reads)

	// Producer is Producer-Epoch and Producer-Seq of a 200/204 append that carried
	// producer headers (B-5.2.1-04).
	Producer *ProducerAck

	TTL       *uint64    // HEAD Stream-TTL (B-5.5-02)
	ExpiresAt *time.Time // HEAD Stream-Expires-At, UTC, millisecond precision

	// Body is a read's entity body: the bytes, or the JSON array of whole messages on a
	// JSON stream (B-9.1-04).
	Body []byte

	// Bucket is the body of GET /{bucket_id}.
	Bucket *BucketView

	// Acks is the body of a 200 append-batch response, one per frame (extension §4.3).
	Acks []FrameAck

	// Snapshot is Stream-Snapshot-Offset and Stream-Snapshot-Digest (extension §2.2-§2.5,
	// §3.2): set on HEAD with a visible snapshot, on snapshot responses, on /bootstrap.
	Snapshot *SnapshotRef
	// SnapshotLocation is where the 307 of GET {stream}/snapshot points:
	// {stream}/snapshot/{offset} (extension §2.3).
	SnapshotLocation *Offset
	// UpToDateAlways renders Stream-Up-To-Date as "true" or "false" instead of only when
	// true (snapshot reads, extension §2.5).
	UpToDateAlways bool
	// Parts is the multipart body of /bootstrap (extension §3.2).
	Parts []Part

	// Extensions is Stream-Extensions: json-record-coordinates-v1, on responses about a
	// JSON stream (extension §6, D5).
	Extensions bool
	// RecordFirst, RecordStart and RecordNext are Stream-Record-First, -Start and -Next
	// (extension §6.3, §6.5, §6.7).
	RecordFirst *uint64
	RecordStart *uint64
	RecordNext  *uint64
}

func u64Ptr(v uint64) *uint64 { return &v }

// recordAck adds Stream-Extensions and the record range [start, next) of a create or
// append on a JSON stream (extension §6.3).
func (r Result) recordAck(st *stream, start, next uint64) Result {
	if st.isJSON() {
		r.Extensions, r.RecordStart, r.RecordNext = true, u64Ptr(start), u64Ptr(next)
	}
	return r
}

// recordBounds adds Stream-Extensions, F and N on a JSON stream (extension §6.5, §6.10).
func (r Result) recordBounds(st *stream) Result {
	if st.isJSON() {
		r.Extensions, r.RecordFirst, r.RecordNext = true, u64Ptr(st.recordFirst()), u64Ptr(st.recordNext())
	}
	return r
}

// advertise adds Stream-Extensions on a JSON stream (extension §6, D5).
func (r Result) advertise(st *stream) Result {
	r.Extensions = r.Extensions || st.isJSON()
	return r
}

// ProducerAck is the producer state a successful append reports (B-5.2.1-04).
type ProducerAck struct {
	Epoch uint64
	Seq   uint64
}

// BucketView is what GET /{bucket_id} reports (X-1.3-01).
type BucketView struct {
	ID      string
	Streams int
}

// fail is the Result of a protocol error.
func fail(status int, err error) Result { return Result{Status: status, Err: err} }

// StatusOK etc. name the statuses the model decides (net/http is not imported: the model
// performs no IO).
const (
	StatusOK                = 200
	StatusCreated           = 201
	StatusNoContent         = 204
	StatusTemporaryRedirect = 307
	StatusBadRequest        = 400
	StatusForbidden         = 403
	StatusNotFound          = 404
	StatusConflict          = 409
	StatusGone              = 410
	StatusTooLarge          = 413
	StatusNotAllowed        = 405
	StatusPrecondition      = 412
)
