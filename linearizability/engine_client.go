package linearizability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// EngineClient drives a storage backend through httpd.Store, the interface the HTTP
// layer uses: *engine.Engine (as httpd.EngineStore) or a wrapper around it. Using
// httpd's interface lets the same fault-injecting wrappers run at both levels.
// Responses are given the statuses httpd would send (B-5.2-08, B-5.2.1-04).
type EngineClient struct {
	Store  httpd.Store
	Bucket string
}

var _ Client = EngineClient{}

func (c EngineClient) key(stream string) model.StreamKey {
	return model.StreamKey{Bucket: c.Bucket, Stream: stream}
}

// Setup creates the bucket (it may exist already).
func (c EngineClient) Setup() error {
	_, err := c.Store.CreateBucket(c.Bucket)
	return err
}

// Create implements Client.
func (c EngineClient) Create(stream string) Output {
	ct := c.contentType(stream)
	res, err := c.Store.Create(c.key(stream), engine.CreateRequest{ContentType: ct, MediaType: ct})
	if err != nil {
		return errorOutput(err)
	}
	out := Output{Status: 200, Offset: res.Info.Tail.String(), Closed: res.Info.Closed}
	if res.Created {
		out.Status = 201
	}
	if res.Info.JSON() {
		out.RecStart, out.RecNext = u64p(res.RecordStart), u64p(res.RecordNext)
	}
	return out
}

// Append implements Client.
func (c EngineClient) Append(in Input) Output {
	req := engine.AppendRequest{Body: []byte(in.Body), Close: in.Close, RecordMatch: in.RecordMatch}
	if in.Body != "" {
		req.MediaType = c.contentType(in.Stream)
	}
	if p := in.Producer; p != nil {
		req.Producer = &model.Producer{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq}
	}
	if in.StreamSeq != "" {
		s := in.StreamSeq
		req.StreamSeq = &s
	}
	res, err := c.Store.Append(c.key(in.Stream), req)
	if err != nil {
		return errorOutput(err)
	}
	out := Output{Status: 204, Offset: res.Tail.String(), Closed: res.Closed}
	if in.Producer != nil {
		if res.ProducerAck {
			out.Epoch, out.Seq = u64p(res.ProducerEpoch), u64p(res.ProducerSeq)
		}
		if res.Outcome == engine.Appended {
			out.Status = 200
		}
	}
	if res.JSON {
		out.RecStart, out.RecNext = u64p(res.RecordStart), u64p(res.RecordNext)
	}
	return out
}

// ReadAll implements Client: one read of everything (the engine serves it from one
// committed view).
func (c EngineClient) ReadAll(stream string) (Output, []byte) {
	res, err := c.Store.Read(c.key(stream), engine.ReadRequest{From: model.OffsetSpec{Kind: model.SpecStart}, MaxBytes: 1 << 30})
	retained := ""
	for gone := (*model.RetainedError)(nil); errors.As(err, &gone); {
		retained = gone.Start.String() // D2: -1 is 410 once retention has advanced
		res, err = c.Store.Read(c.key(stream), engine.ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: gone.Start}, MaxBytes: 1 << 30})
	}
	if err != nil {
		return errorOutput(err), nil
	}
	if !res.UpToDate {
		return Output{Error: "read did not reach the tail"}, nil
	}
	return Output{Status: 200, Offset: res.Next.String(), Closed: res.EOF, Len: uint64(len(res.Data)),
		Digest: DigestOf(res.Data), Msgs: countMsgs(stream, res.Data), Retained: retained}, res.Data
}

// Head implements Client.
func (c EngineClient) Head(stream string) Output {
	info, err := c.Store.Head(c.key(stream))
	if err != nil {
		return errorOutput(err)
	}
	out := Output{Status: 200, Offset: info.Tail.String(), Closed: info.Closed}
	if sn := info.Snapshot; sn != nil {
		out.SnapOffset, out.SnapDigest = sn.Offset.String(), sn.Digest
	}
	if info.JSON() {
		out.RecFirst, out.RecNext = u64p(info.RecordFirst), u64p(info.RecordNext)
	}
	return out
}

// ReadFrom implements Client.
func (c EngineClient) ReadFrom(stream, offset string) ([]byte, string, error) {
	o, err := model.ParseOffset(offset)
	if err != nil {
		return nil, "", err
	}
	var data []byte
	for {
		res, err := c.Store.Read(c.key(stream), engine.ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: o}})
		if err != nil {
			return nil, "", err
		}
		data = append(data, res.Data...)
		if res.UpToDate {
			return data, res.Next.String(), nil
		}
		o = res.Next
	}
}

// LiveModes implements Client: the engine has one live mode, a reader that waits.
func (c EngineClient) LiveModes() []string { return []string{"wait"} }

// Follow implements Client with engine readers (OpenLive, Read, Wait), reopening the
// reader now and then to resume from the last offset.
func (c EngineClient) Follow(ctx context.Context, stream, mode string, rng *rand.Rand) Transcript {
	t := Transcript{Stream: stream, Mode: mode}
	from := "-1"
	spec := model.OffsetSpec{Kind: model.SpecStart}
	for ctx.Err() == nil {
		lr, _, err := c.Store.OpenLive(c.key(stream))
		if err != nil {
			t.End = "open: " + err.Error()
			return t
		}
		reconnect := true
		for n := 1 + rng.IntN(20); n > 0 && ctx.Err() == nil; n-- {
			res, err := lr.Read(engine.ReadRequest{From: spec})
			if err != nil {
				lr.Close()
				t.End = "read: " + err.Error()
				return t
			}
			if len(res.Data) > 0 || res.EOF {
				t.Events = append(t.Events, LiveEvent{From: from, Data: res.Data, Next: res.Next.String(),
					Closed: res.EOF, Reconnect: reconnect})
				reconnect = false
				from, spec = res.Next.String(), model.OffsetSpec{Kind: model.SpecAt, At: res.Next}
			}
			if res.EOF {
				lr.Close()
				t.End = "eof"
				return t
			}
			if res.UpToDate {
				if _, err := lr.Wait(ctx, res.Next); err != nil && ctx.Err() == nil {
					lr.Close()
					t.End = "wait: " + err.Error()
					return t
				}
			}
		}
		lr.Close()
	}
	t.End = "stopped: " + context.Cause(ctx).Error()
	return t
}

// errorOutput maps an engine error to the response httpd would send (httpd/errors.go);
// storage failures and anything unexpected are unknown outcomes.
func errorOutput(err error) Output {
	var (
		closed *model.ClosedError
		stale  *model.StaleEpochError
		gap    *model.SeqGapError
		recMis *model.RecordMismatchError
	)
	switch {
	case errors.As(err, &closed):
		return Output{Status: 409, Closed: true, Offset: closed.Final.String()}
	case errors.As(err, &stale):
		return Output{Status: 403, Epoch: u64p(stale.Current)}
	case errors.As(err, &gap):
		return Output{Status: 409, Expected: u64p(gap.Expected), Received: u64p(gap.Received)}
	case errors.As(err, &recMis):
		return Output{Status: 412, RecNext: u64p(recMis.Next), Offset: recMis.Tail.String()}
	case errors.Is(err, model.ErrEpochSeqNotZero):
		return Output{Status: 400}
	case errors.Is(err, model.ErrStreamSeqConflict), errors.Is(err, model.ErrConfigMismatch),
		errors.Is(err, model.ErrContentTypeMismatch), errors.Is(err, model.ErrSnapshotConflict),
		errors.Is(err, model.ErrSnapshotPastTail), errors.Is(err, model.ErrSnapshotMatch),
		errors.Is(err, model.ErrRetentionInvalid):
		return Output{Status: 409}
	case errors.Is(err, model.ErrSnapshotNotFound):
		return Output{Status: 404}
	case errors.Is(err, model.ErrOffsetGone):
		return Output{Status: 410}
	case errors.Is(err, model.ErrStreamNotFound), errors.Is(err, model.ErrBucketNotFound):
		return Output{Status: 404}
	case errors.Is(err, model.ErrStreamGone):
		return Output{Status: 410}
	case errors.Is(err, model.ErrStreamDeletedPut), errors.Is(err, model.ErrForkSourceGone):
		return Output{Status: 409}
	case errors.Is(err, model.ErrForkSourceMiss):
		return Output{Status: 404}
	}
	return Output{Error: fmt.Sprintf("engine: %v", err)}
}
