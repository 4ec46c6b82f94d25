package cluster

import (
	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// Store is the httpd.Store of a node: each call goes to the engine of its bucket's
// partition when this node serves that partition now, else it fails with
// model.ErrShuttingDown (503). The Forwarder sends a request here only while this node
// owns its partition, so that failure is the rare race with a change of owner.
type Store struct{ n *Node }

// Store returns the node's httpd.Store.
func (n *Node) Store() Store { return Store{n} }

var _ httpd.Store = Store{}

func (s Store) engine(bucket string) (*engine.Engine, error) {
	eng, _, _ := s.n.route(s.n.PartitionOf(bucket))
	if eng == nil {
		return nil, model.ErrShuttingDown
	}
	return eng, nil
}

// CreateBucket creates bucket id (extension §1).
func (s Store) CreateBucket(id string) (bool, error) {
	e, err := s.engine(id)
	if err != nil {
		return false, err
	}
	return e.CreateBucket(id)
}

// Bucket returns bucket id's record and counts.
func (s Store) Bucket(id string) (engine.BucketInfo, error) {
	e, err := s.engine(id)
	if err != nil {
		return engine.BucketInfo{}, err
	}
	return e.Bucket(id)
}

// DeleteBucket deletes an empty bucket.
func (s Store) DeleteBucket(id string) error {
	e, err := s.engine(id)
	if err != nil {
		return err
	}
	return e.DeleteBucket(id)
}

// ListStreams lists a bucket's streams (one partition holds them all).
func (s Store) ListStreams(bucket string, q engine.ListQuery) (engine.StreamList, error) {
	e, err := s.engine(bucket)
	if err != nil {
		return engine.StreamList{}, err
	}
	return e.ListStreams(bucket, q)
}

// Create creates a stream or fork.
func (s Store) Create(key model.StreamKey, req engine.CreateRequest) (engine.CreateResult, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.CreateResult{}, err
	}
	return e.Create(key, req)
}

// Append appends to a stream.
func (s Store) Append(key model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.AppendResult{}, err
	}
	return e.Append(key, req)
}

// Head returns a stream's metadata.
func (s Store) Head(key model.StreamKey) (engine.StreamInfo, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.StreamInfo{}, err
	}
	return e.Head(key)
}

// Read reads a stream.
func (s Store) Read(key model.StreamKey, req engine.ReadRequest) (engine.ReadResult, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.ReadResult{}, err
	}
	return e.Read(key, req)
}

// Delete deletes a stream.
func (s Store) Delete(key model.StreamKey) error {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return err
	}
	return e.Delete(key)
}

// OpenLive opens a live reader on the owner's engine: it is woken by the owner's commits.
func (s Store) OpenLive(key model.StreamKey) (httpd.LiveReader, engine.StreamInfo, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return nil, engine.StreamInfo{}, err
	}
	return httpd.EngineStore{Engine: e}.OpenLive(key)
}

// Attrs returns a stream's attributes.
func (s Store) Attrs(key model.StreamKey) ([]byte, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return nil, err
	}
	return e.Attrs(key)
}

// SetAttrs replaces a stream's attributes.
func (s Store) SetAttrs(key model.StreamKey, attrs []byte) error {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return err
	}
	return e.SetAttrs(key, attrs)
}

// AppendBatch appends a batch of frames.
func (s Store) AppendBatch(key model.StreamKey, mediaType string, frames [][]byte) ([]engine.FrameAck, bool, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return nil, false, err
	}
	return e.AppendBatch(key, mediaType, frames)
}

// PublishSnapshot publishes a snapshot.
func (s Store) PublishSnapshot(key model.StreamKey, req engine.SnapshotRequest) (engine.SnapshotInfo, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.SnapshotInfo{}, err
	}
	return e.PublishSnapshot(key, req)
}

// Snapshot returns a snapshot.
func (s Store) Snapshot(key model.StreamKey, at *model.Offset) (engine.StreamInfo, []byte, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.StreamInfo{}, nil, err
	}
	return e.Snapshot(key, at)
}

// DeleteSnapshot deletes a snapshot.
func (s Store) DeleteSnapshot(key model.StreamKey, at model.Offset) error {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return err
	}
	return e.DeleteSnapshot(key, at)
}

// SetRetention sets a stream's retention boundary.
func (s Store) SetRetention(key model.StreamKey, at engine.Position) (engine.StreamInfo, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return engine.StreamInfo{}, err
	}
	return e.SetRetention(key, at)
}

// OpenBootstrap opens a bootstrap read.
func (s Store) OpenBootstrap(key model.StreamKey) (*engine.Bootstrap, error) {
	e, err := s.engine(key.Bucket)
	if err != nil {
		return nil, err
	}
	return e.OpenBootstrap(key)
}
