package difftest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// Observation is what a response makes observable, in one normalized form for the
// model, the engine and the HTTP layer.
type Observation struct {
	// Status is the HTTP status; 0 when the target cannot tell (engine errors: the
	// engine returns errors, and statuses are chosen by httpd).
	Status int
	// Code is the stable error code (D7), "" on success.
	Code string
	// Header holds the protocol headers that matter, by canonical name:
	// Content-Type, Location ("present"), Stream-Next-Offset, Stream-Closed,
	// Stream-Up-To-Date, Producer-Epoch, Producer-Seq, Producer-Expected-Seq,
	// Producer-Received-Seq, Stream-Ttl, Stream-Expires-At.
	Header map[string]string
	// Body is a read's entity body, or "bucket_id=<id> streams=<n>" for GET /{bucket}.
	Body string
	// Acks are the acknowledgements of a 200 append-batch response (extension §4.3).
	Acks []AckObs
	// Parts are the parts of a /bootstrap response (extension §3.2).
	Parts []PartObs
}

// Compared header names (canonical MIME form, as net/http stores them).
const (
	hContentType = "Content-Type"
	hLocation    = "Location"
	hNext        = "Stream-Next-Offset"
	hClosed      = "Stream-Closed"
	hUpToDate    = "Stream-Up-To-Date"
	hEpoch       = "Producer-Epoch"
	hSeq         = "Producer-Seq"
	hExpected    = "Producer-Expected-Seq"
	hReceived    = "Producer-Received-Seq"
	hTTL         = "Stream-Ttl"
	hExpiresAt   = "Stream-Expires-At"
	hSnapOffset  = "Stream-Snapshot-Offset"
	hSnapDigest  = "Stream-Snapshot-Digest"
	hExtensions  = "Stream-Extensions"
	hRecFirst    = "Stream-Record-First"
	hRecStart    = "Stream-Record-Start"
	hRecNext     = "Stream-Record-Next"
)

// extRecords is the token of JSON record coordinates (extension §6).
const extRecords = "json-record-coordinates-v1"

var comparedHeaders = []string{hContentType, hLocation, hNext, hClosed, hUpToDate, hEpoch, hSeq,
	hExpected, hReceived, hTTL, hExpiresAt, hSnapOffset, hSnapDigest, hExtensions, hRecFirst, hRecStart,
	hRecNext}

// FromResult renders the model's decision as an Observation.
func FromResult(r model.Result) Observation {
	o := Observation{Status: r.Status, Code: model.ErrorCode(r.Err), Header: map[string]string{}}
	h := o.Header
	if r.ContentType != "" {
		h[hContentType] = r.ContentType
	}
	if r.Location {
		h[hLocation] = "present"
	}
	if r.NextOffset != nil {
		h[hNext] = r.NextOffset.String()
	}
	if r.Closed {
		h[hClosed] = "true"
	}
	if r.UpToDate || r.UpToDateAlways {
		h[hUpToDate] = strconv.FormatBool(r.UpToDate)
	}
	if p := r.Producer; p != nil {
		h[hEpoch], h[hSeq] = u(p.Epoch), u(p.Seq)
	}
	if r.TTL != nil {
		h[hTTL] = u(*r.TTL)
	}
	if r.ExpiresAt != nil {
		h[hExpiresAt] = model.FormatExpiresAt(*r.ExpiresAt)
	}
	errorHeaders(h, r.Err)
	o.Body = string(r.Body)
	if b := r.Bucket; b != nil {
		o.Body = bucketBody(b.ID, b.Streams)
	}
	for _, a := range r.Acks {
		o.Acks = append(o.Acks, ackFromModel(a))
	}
	if sn := r.Snapshot; sn != nil {
		h[hSnapOffset] = "-1"
		if sn.Offset != nil {
			h[hSnapOffset] = sn.Offset.String()
		}
		if sn.Digest != "" {
			h[hSnapDigest] = sn.Digest
		}
	}
	if r.SnapshotLocation != nil {
		h[hLocation] = snapshotLocation(*r.SnapshotLocation)
	}
	if r.Extensions {
		h[hExtensions] = extRecords
	}
	for k, v := range map[string]*uint64{hRecFirst: r.RecordFirst, hRecStart: r.RecordStart, hRecNext: r.RecordNext} {
		if v != nil {
			h[k] = u(*v)
		}
	}
	for _, p := range r.Parts {
		o.Parts = append(o.Parts, PartObs{ContentType: p.ContentType, Body: string(p.Body)})
	}
	return o
}

// snapshotLocation is how a 307 Location is compared: the part after the stream's path.
func snapshotLocation(o model.Offset) string { return "snapshot/" + o.String() }

// errorHeaders adds the headers a typed protocol error carries (B-5.2-10, B-5.2.1-04).
func errorHeaders(h map[string]string, err error) {
	var (
		closed *model.ClosedError
		stale  *model.StaleEpochError
		gap    *model.SeqGapError
		recMis *model.RecordMismatchError
		recRng *model.RecordRangeError
		gone   *model.RetainedError
	)
	switch {
	case errors.As(err, &gone):
		h[hNext] = gone.Start.String()
	case errors.As(err, &closed):
		h[hClosed], h[hNext] = "true", closed.Final.String()
	case errors.As(err, &stale):
		h[hEpoch] = u(stale.Current)
	case errors.As(err, &gap):
		h[hExpected], h[hReceived] = u(gap.Expected), u(gap.Received)
	case errors.As(err, &recMis):
		h[hExtensions], h[hRecNext], h[hNext] = extRecords, u(recMis.Next), recMis.Tail.String()
	case errors.As(err, &recRng):
		h[hExtensions], h[hRecFirst], h[hRecNext] = extRecords, u(recRng.First), u(recRng.Next)
	}
}

func bucketBody(id string, streams int) string {
	return fmt.Sprintf("bucket_id=%s streams=%d", id, streams)
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// Diff describes how got differs from want ("" when they agree). A zero Status on
// either side is not compared.
func (want Observation) Diff(got Observation) string {
	var out []string
	if want.Status != 0 && got.Status != 0 && want.Status != got.Status {
		out = append(out, fmt.Sprintf("status %d, want %d", got.Status, want.Status))
	}
	if want.Code != got.Code {
		out = append(out, fmt.Sprintf("error code %q, want %q", got.Code, want.Code))
	}
	keys := slices.Sorted(maps.Keys(want.Header))
	for k := range got.Header {
		if _, ok := want.Header[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if want.Header[k] != got.Header[k] {
			out = append(out, fmt.Sprintf("%s %q, want %q", k, got.Header[k], want.Header[k]))
		}
	}
	if want.Body != got.Body {
		out = append(out, fmt.Sprintf("body %q, want %q", clip(got.Body), clip(want.Body)))
	}
	out = append(out, diffAcks(want.Acks, got.Acks)...)
	out = append(out, diffParts(want.Parts, got.Parts)...)
	return strings.Join(out, "; ")
}

func (o Observation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", o.Status)
	if o.Code != "" {
		fmt.Fprintf(&b, " %s", o.Code)
	}
	for _, k := range slices.Sorted(maps.Keys(o.Header)) {
		fmt.Fprintf(&b, " %s=%s", k, o.Header[k])
	}
	if o.Body != "" {
		fmt.Fprintf(&b, " body=%q", clip(o.Body))
	}
	if len(o.Acks) > 0 {
		fmt.Fprintf(&b, " acks=%s", o.Acks)
	}
	if len(o.Parts) > 0 {
		fmt.Fprintf(&b, " parts=%s", o.Parts)
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
