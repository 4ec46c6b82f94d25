package httpd

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// statusOf is the one table from protocol errors to HTTP statuses (D7). Typed errors are
// matched in errorHeaders and statusOfTyped; anything unknown is a 500 and is logged.
var statusOf = map[*model.Error]int{
	model.ErrBadOffset: 400, model.ErrBadTTL: 400, model.ErrBadExpiresAt: 400,
	model.ErrTTLAndExpiresAt: 400, model.ErrBadContentType: 400,
	model.ErrMissingContentType: 400, model.ErrEmptyBody: 400, model.ErrBadProducer: 400,
	model.ErrBadStreamSeq: 400, model.ErrInvalidJSON: 400, model.ErrEmptyJSONArray: 400,
	model.ErrBadLive: 400, model.ErrLiveNeedsOffset: 400, model.ErrBadQuery: 400, model.ErrRepeatedHeader: 400,
	model.ErrBadBucketID: 400, model.ErrBadStreamID: 400, model.ErrBadFlatName: 400, model.ErrBadForkRequest: 400,
	model.ErrBadAttrs: 400, model.ErrBadBatch: 400, model.ErrBadRecord: 400,
	model.ErrBadSnapshot: 400, model.ErrTooLarge: 413, model.ErrUnauthorized: 401,
	model.ErrBadBody: 400, model.ErrTooManyMessages: 413, model.ErrBucketReserved: 409,
	model.ErrNotImplemented: 501, model.ErrRouteNotFound: 404, model.ErrMethodNotAllowed: 405,
	model.ErrOffsetBeyondTail: 400, model.ErrOffsetNotBoundary: 400, model.ErrOffsetGone: 410,
	model.ErrBucketNotFound: 404, model.ErrBucketExists: 409, model.ErrBucketNotEmpty: 409,
	model.ErrStreamNotFound: 404, model.ErrStreamGone: 410, model.ErrStreamDeletedPut: 409,
	model.ErrConfigMismatch: 409, model.ErrForkSourceGone: 409, model.ErrForkSourceMiss: 404,
	model.ErrContentTypeMismatch: 409, model.ErrStreamSeqConflict: 409,
	model.ErrEpochSeqNotZero:  400,
	model.ErrSnapshotNotFound: 404, model.ErrSnapshotConflict: 409, model.ErrSnapshotMatch: 409,
	model.ErrSnapshotPastTail: 409,
	model.ErrSnapshotLatest:   409, model.ErrRetentionInvalid: 409,
	model.ErrStorageFailed: 503, model.ErrShuttingDown: 503, model.ErrBusy: 503,
	model.ErrBodyTimeout:     408,
	model.ErrBadSubscription: 400, model.ErrSubExists: 409, model.ErrBadSubID: 400,
	model.ErrSubFenced: 409, model.ErrSubClaimed: 409, model.ErrSubNoPendingWork: 409, model.ErrSubAckOffset: 409,
	ErrWebhooksOff: 400, ErrNotJSONBody: 400, ErrBadOffsetToken: 400,
	subs.ErrNotFound: 404, subs.ErrWrongType: 400, subs.ErrURLRejected: 400, subs.ErrBadWorker: 400,
	subs.ErrTokenInvalid: 401, subs.ErrTokenExpired: 401, subs.ErrAckOffset: 409,
	subs.ErrWakeStream:          409,
	model.ErrBadContentEncoding: 415, model.ErrForbidden: 403,
	model.ErrMalformedRequest: 400, model.ErrHeaderTooLarge: 431, model.ErrBadTransferCoding: 501,
}

// retryAfter is the Retry-After (seconds) of every 503 (issue 20, D4 amended): the engine
// probes a failed storage every 500 ms, and a busy or draining server is worth retrying
// (here or elsewhere) a second later.
const retryAfter = "1"

// errorStatus returns the HTTP status for err, and whether err is a known protocol error.
func errorStatus(err error) (int, bool) {
	var pe *model.Error
	if errors.As(err, &pe) {
		if st, ok := statusOf[pe]; ok {
			return st, true
		}
	}
	var (
		closed *model.ClosedError
		stale  *model.StaleEpochError
		gap    *model.SeqGapError
		recMis *model.RecordMismatchError
		recRng *model.RecordRangeError
	)
	switch {
	case errors.As(err, &closed), errors.As(err, &gap):
		return http.StatusConflict, true
	case errors.As(err, &stale):
		return http.StatusForbidden, true
	case errors.As(err, &recMis):
		return http.StatusPreconditionFailed, true
	case errors.As(err, &recRng):
		if recRng.Gone {
			return http.StatusGone, true
		}
		return http.StatusBadRequest, true
	}
	return http.StatusInternalServerError, false
}

// errorHeaders sets the headers some errors carry (B-5.2-10, B-5.2.1-04, extension §6).
func errorHeaders(h http.Header, err error) {
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
		h.Set(hNextOffset, gone.Start.String())
	case errors.As(err, &closed):
		h.Set(hStreamClosed, "true")
		h.Set(hNextOffset, closed.Final.String())
	case errors.As(err, &stale):
		h.Set(hProducerEpoch, strconv.FormatUint(stale.Current, 10))
	case errors.As(err, &gap):
		h.Set(hProducerExpectedSeq, strconv.FormatUint(gap.Expected, 10))
		h.Set(hProducerReceivedSeq, strconv.FormatUint(gap.Received, 10))
	case errors.As(err, &recMis):
		h.Set(hExtensions, extRecords)
		h.Set(hRecordNext, strconv.FormatUint(recMis.Next, 10))
		h.Set(hNextOffset, recMis.Tail.String())
	case errors.As(err, &recRng):
		h.Set(hExtensions, extRecords)
		h.Set(hRecordFirst, strconv.FormatUint(recRng.First, 10))
		h.Set(hRecordNext, strconv.FormatUint(recRng.Next, 10))
	}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// ALREADY_CLAIMED carries the lease holder and generation (base protocol §7.2).
		CurrentHolder *string `json:"current_holder,omitempty"`
		Generation    *uint64 `json:"generation,omitempty"`
	} `json:"error"`
}

// WriteError renders err as every listener of dsd answers an error (D7): the status of its
// code (CONFORMANCE.md's error table), its headers (Retry-After on 503, WWW-Authenticate on
// 401, ...) and {"error":{"code","message"}} as application/json (no body on HEAD).
func WriteError(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, err) }

// writeError renders err: its status, its headers and the JSON body of D7 (none on HEAD).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, known := errorStatus(err)
	code := model.ErrorCode(err)
	if !known {
		slog.Error("internal error", "method", r.Method, "path", r.URL.RequestURI(), "err", err)
		code = "INTERNAL"
	}
	noteCode(w, code)
	h := w.Header()
	errorHeaders(h, err)
	h.Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", retryAfter)
	}
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="dsd"`)
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	var body errorBody
	body.Error.Code, body.Error.Message = code, clientMessage(err, status, known)
	var claimed *subs.ClaimedError
	if errors.As(err, &claimed) {
		body.Error.CurrentHolder, body.Error.Generation = &claimed.Holder, &claimed.Generation
	}
	b, _ := json.Marshal(body)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// clientMessage is the message an error body carries: the error's text for client errors;
// for server errors only the sentinel's generic text, never the wrapped cause (a data
// file's path, an OS error: D4 amended, D7). The cause is the engine's to log.
func clientMessage(err error, status int, known bool) string {
	if !known {
		return "internal server error"
	}
	var pe *model.Error
	if status >= 500 && errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}
