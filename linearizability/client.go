package linearizability

import (
	"context"
	"math/rand/v2"
)

// Client performs the workload's operations on one server, at the engine level or over
// HTTP. Methods are safe for concurrent use; each returns what was observed, with
// Output.Status 0 when the outcome is unknown.
type Client interface {
	// Setup prepares the server before a run (a bucket on the bucketed surface).
	Setup() error
	// Create creates stream with the workload's configuration: application/octet-stream,
	// no TTL or expiry, open.
	Create(stream string) Output
	// Append sends one POST.
	Append(in Input) Output
	// AppendBatch sends one POST {stream}/append-batch, one frame per body (extension
	// §4); a 200's Output.Acks holds one acknowledgement per frame.
	AppendBatch(stream string, frames []string) Output
	// ReadAll reads stream from -1 up to the tail, following Stream-Next-Offset across
	// chunks; it returns the summary and the content.
	ReadAll(stream string) (Output, []byte)
	// Head sends HEAD.
	Head(stream string) Output
	// ReadFrom catch-up reads from offset to the tail: the data and the final
	// Stream-Next-Offset.
	ReadFrom(stream, offset string) ([]byte, string, error)
	// PublishSnapshot publishes blob as the snapshot at offset token tok (extension
	// §2.2); the output carries Stream-Snapshot-Offset and -Digest.
	PublishSnapshot(stream, tok, blob string) Output
	// SetRetention moves the retention boundary to tok (extension §2.2).
	SetRetention(stream, tok string) Output
	// ReadSnapshot reads the visible snapshot (GET {stream}/snapshot and its 307): its
	// offset, digest and the D5 digest of the blob received (Output.Blob).
	ReadSnapshot(stream string) Output
	// Bootstrap reads GET {stream}/bootstrap (extension §3): Output.Blob is the first
	// part's D5 digest, Len and Digest summarize the update parts' canonical bytes.
	Bootstrap(stream string) Output
	// RecordRead reads a JSON stream record-aware (extension §6.6): which = "tail" reads
	// every retained record (following Stream-Record-Next across chunks), "now" the
	// empty read at N. Len, Digest and Msgs summarize the records' canonical bytes.
	RecordRead(stream, which string) Output
	// Fork creates stream as a fork of source at offset token offset (B-4.2), with no
	// Content-Type (inherited) and no body.
	Fork(stream, source, offset string) Output
	// Delete sends DELETE (B-5.4).
	Delete(stream string) Output
	// LiveModes names the live-read modes Follow supports.
	LiveModes() []string
	// Follow runs a live reader of stream from -1 until EOF or until ctx ends, sometimes
	// disconnecting and resuming from the last offset it was given (rng decides when).
	Follow(ctx context.Context, stream, mode string, rng *rand.Rand) Transcript
}

// ContentType is the content type of every stream the workload creates: binary, so SSE
// carries it base64-encoded and byte-exact (B-5.8-02).
const ContentType = "application/octet-stream"
