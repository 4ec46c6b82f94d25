package difftest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/httpd"
	"github.com/dsd-project/dsd/model"
)

// plantedStore is a store with one deliberate bug in an extension rule.
type plantedStore struct {
	name string
	wrap func(httpd.Store) httpd.Store
}

// plantedStores break one rule each that the model states; the differential test must
// notice every one of them within plantedScripts random scripts.
var plantedStores = []plantedStore{
	{"attrs-put-merges", func(s httpd.Store) httpd.Store { return attrsMerge{s} }},
	{"create-drops-attrs", func(s httpd.Store) httpd.Store { return createDropsAttrs{s} }},
	{"batch-stops-at-failed-frame", func(s httpd.Store) httpd.Store { return batchStops{s} }},
	{"snapshot-digest-of-raw-content-type", func(s httpd.Store) httpd.Store { return rawDigest{s} }},
	{"bootstrap-drops-snapshot", func(s httpd.Store) httpd.Store { return bootstrapNoSnapshot{s} }},
	{"head-omits-snapshot", func(s httpd.Store) httpd.Store { return headNoSnapshot{s} }},
	{"dedup-reports-the-current-record-range", func(s httpd.Store) httpd.Store { return dedupRange{s} }},
	{"record-match-ignored", func(s httpd.Store) httpd.Store { return noRecordMatch{s} }},
	{"head-record-first-stays-zero", func(s httpd.Store) httpd.Store { return headFirstZero{s} }},
	{"fork-ignores-sub-offset", func(s httpd.Store) httpd.Store { return forkNoSub{s} }},
	{"fork-at-the-tail-whatever-the-offset", func(s httpd.Store) httpd.Store { return forkAtTail{s} }},
	{"soft-deleted-reads-as-missing", func(s httpd.Store) httpd.Store { return goneAsMissing{s} }},
}

const plantedScripts = 400

// Every planted bug is reported as a difference between the model and httpd.
func TestPlantedBugsAreCaught(t *testing.T) {
	for _, pc := range plantedStores {
		t.Run(pc.name, func(t *testing.T) {
			h, err := OpenHarness(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			handler := httpd.New(pc.wrap(h.HTTP), httpd.Config{LongPollTimeout: 10 * time.Millisecond})
			for i := 0; i < plantedScripts; i++ {
				start := DefaultStart()
				script := Generate(NewRandSource(uint64(i)), GenConfig{Steps: 60, Model: h.Model, Start: start})
				h.Clock.Set(start)
				err := Run("planted", script, HTTPTarget{H: handler}, h.Clock, h.Model, fmt.Sprintf("p%d-", i))
				var m *Mismatch
				if errors.As(err, &m) {
					t.Logf("caught after %d scripts at step %d: %s\n  command: %s", i+1, m.Step, m.Diff, m.Script[m.Step].Name())
					return
				}
			}
			t.Fatalf("%d scripts ran without noticing the planted bug", plantedScripts)
		})
	}
}

// attrsMerge merges a PUT /attrs object into the stored one instead of replacing it
// (extension §5.4: "The request body replaces the complete attribute object").
type attrsMerge struct{ httpd.Store }

func (s attrsMerge) SetAttrs(k model.StreamKey, attrs []byte) error {
	old, err := s.Store.Attrs(k)
	if err != nil || old == nil || attrs == nil {
		return s.Store.SetAttrs(k, attrs)
	}
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(old, &a)
	_ = json.Unmarshal(attrs, &b)
	for key, v := range b {
		a[key] = v
	}
	merged, _ := json.Marshal(a)
	return s.Store.SetAttrs(k, merged)
}

// createDropsAttrs forgets Stream-Attrs on create (extension §5.2).
type createDropsAttrs struct{ httpd.Store }

func (s createDropsAttrs) Create(k model.StreamKey, req engine.CreateRequest) (engine.CreateResult, error) {
	req.Attrs = nil
	return s.Store.Create(k, req)
}

// batchStops gives up on a batch at its first failed frame: later frames get the same
// error and are not appended (extension §4.3: frames are independent appends).
type batchStops struct{ httpd.Store }

func (s batchStops) AppendBatch(k model.StreamKey, mt string, frames [][]byte) ([]engine.FrameAck, bool, error) {
	var out []engine.FrameAck
	var isJSON bool
	for i, f := range frames {
		acks, j, err := s.Store.AppendBatch(k, mt, [][]byte{f})
		if err != nil {
			return nil, false, err
		}
		isJSON = j
		out = append(out, acks[0])
		if acks[0].Err != nil {
			for range frames[i+1:] {
				out = append(out, acks[0])
			}
			break
		}
	}
	return out, isJSON, nil
}

// rawDigest reports a publish's digest over the Content-Type as sent instead of the
// normalized media type (D5).
type rawDigest struct{ httpd.Store }

func (s rawDigest) PublishSnapshot(k model.StreamKey, req engine.SnapshotRequest) (engine.SnapshotInfo, error) {
	info, err := s.Store.PublishSnapshot(k, req)
	if err == nil && req.ContentType != "" {
		info.Digest = engine.SnapshotDigest(req.ContentType, req.Body)
	}
	return info, err
}

// bootstrapNoSnapshot sends an empty first part even when a snapshot is visible
// (extension §3.2).
type bootstrapNoSnapshot struct{ httpd.Store }

func (s bootstrapNoSnapshot) OpenBootstrap(k model.StreamKey) (*engine.Bootstrap, error) {
	b, err := s.Store.OpenBootstrap(k)
	if err == nil {
		b.Snapshot, b.Body = nil, nil
	}
	return b, err
}

// headNoSnapshot leaves Stream-Snapshot-Offset out of HEAD (extension §2.4).
type headNoSnapshot struct{ httpd.Store }

func (s headNoSnapshot) Head(k model.StreamKey) (engine.StreamInfo, error) {
	info, err := s.Store.Head(k)
	info.Snapshot = nil
	return info, err
}

// dedupRange answers a deduplicated producer retry with the empty range at N instead of
// its original range (extension §6.3, X-6.3-05).
type dedupRange struct{ httpd.Store }

func (s dedupRange) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	res, err := s.Store.Append(k, req)
	if err == nil && res.Outcome == engine.Duplicate {
		info, _ := s.Store.Head(k)
		res.RecordStart, res.RecordNext = info.RecordNext, info.RecordNext
	}
	return res, err
}

// noRecordMatch ignores Stream-Record-Match (extension §6.4).
type noRecordMatch struct{ httpd.Store }

func (s noRecordMatch) Append(k model.StreamKey, req engine.AppendRequest) (engine.AppendResult, error) {
	req.RecordMatch = nil
	return s.Store.Append(k, req)
}

// headFirstZero reports F = 0 on HEAD whatever the retention (extension §6.5, §6.10).
type headFirstZero struct{ httpd.Store }

func (s headFirstZero) Head(k model.StreamKey) (engine.StreamInfo, error) {
	info, err := s.Store.Head(k)
	info.RecordFirst = 0
	return info, err
}

// forkNoSub ignores Stream-Fork-Sub-Offset (B-4.2-03, B-4.2-14).
type forkNoSub struct{ httpd.Store }

func (s forkNoSub) Create(k model.StreamKey, req engine.CreateRequest) (engine.CreateResult, error) {
	if req.Fork != nil {
		f := *req.Fork
		f.SubOffset = 0
		req.Fork = &f
	}
	return s.Store.Create(k, req)
}

// forkAtTail forks at the source's tail whatever Stream-Fork-Offset says (B-4.2-02).
type forkAtTail struct{ httpd.Store }

func (s forkAtTail) Create(k model.StreamKey, req engine.CreateRequest) (engine.CreateResult, error) {
	if req.Fork != nil && req.Fork.SubOffset == 0 {
		f := *req.Fork
		f.Offset = nil
		req.Fork = &f
	}
	return s.Store.Create(k, req)
}

// goneAsMissing answers reads of a soft-deleted stream 404 instead of 410 (B-4.2-10).
type goneAsMissing struct{ httpd.Store }

func (s goneAsMissing) Read(k model.StreamKey, req engine.ReadRequest) (engine.ReadResult, error) {
	res, err := s.Store.Read(k, req)
	if errors.Is(err, model.ErrStreamGone) {
		err = model.ErrStreamNotFound
	}
	return res, err
}
