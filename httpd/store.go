package httpd

import (
	"context"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// Store is what the HTTP layer needs from storage. *engine.Engine implements it.
type Store interface {
	CreateBucket(id string) (created bool, err error)
	Bucket(id string) (engine.BucketInfo, error)
	DeleteBucket(id string) error
	ListStreams(bucket string, q engine.ListQuery) (engine.StreamList, error)

	Create(key model.StreamKey, req engine.CreateRequest) (engine.CreateResult, error)
	Append(key model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error)
	Head(key model.StreamKey) (engine.StreamInfo, error)
	Read(key model.StreamKey, req engine.ReadRequest) (engine.ReadResult, error)
	Delete(key model.StreamKey) error
	OpenLive(key model.StreamKey) (LiveReader, engine.StreamInfo, error)

	Attrs(key model.StreamKey) ([]byte, error)
	SetAttrs(key model.StreamKey, attrs []byte) error
	AppendBatch(key model.StreamKey, mediaType string, frames [][]byte) ([]engine.FrameAck, bool, error)
	PublishSnapshot(key model.StreamKey, req engine.SnapshotRequest) (engine.SnapshotInfo, error)
	Snapshot(key model.StreamKey, at *model.Offset) (engine.StreamInfo, []byte, error)
	DeleteSnapshot(key model.StreamKey, at model.Offset) error
	SetRetention(key model.StreamKey, at engine.Position) (engine.StreamInfo, error)
	OpenBootstrap(key model.StreamKey) (*engine.Bootstrap, error)
}

// LiveReader is an open long-poll or SSE reader of one stream incarnation.
type LiveReader interface {
	Read(req engine.ReadRequest) (engine.ReadResult, error)
	Wait(ctx context.Context, after model.Offset) (engine.StreamInfo, error)
	Close()
}

// EngineStore adapts *engine.Engine to Store.
type EngineStore struct{ *engine.Engine }

// OpenLive opens a live reader.
func (s EngineStore) OpenLive(key model.StreamKey) (LiveReader, engine.StreamInfo, error) {
	r, info, err := s.Engine.OpenReader(key)
	if err != nil {
		return nil, info, err
	}
	return r, info, nil
}

var _ Store = EngineStore{}
