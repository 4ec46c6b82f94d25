package difftest

import (
	"bytes"
	"strconv"

	"github.com/dsd-project/dsd/engine"
	"github.com/dsd-project/dsd/model"
)

// enginePosition parses a snapshot or retention position as httpd does: the {offset}
// path segment, else ?record= (extension §2.2, §6.10).
func enginePosition(offset, record *string) (engine.Position, error) {
	if offset != nil && *offset != "" && record != nil {
		return engine.Position{}, model.ErrBadRecord
	}
	if offset != nil && *offset != "" {
		o, err := model.ParseOffset(*offset)
		if err != nil {
			return engine.Position{}, err
		}
		return engine.Position{Offset: o}, nil
	}
	if record == nil {
		return engine.Position{}, model.ErrBadOffset
	}
	n, ok := model.ParseRecordOrdinal(*record)
	if !ok {
		return engine.Position{}, model.ErrBadRecord
	}
	return engine.Position{Record: n, ByRecord: true}, nil
}

func snapshotHeaders(h map[string]string, s *engine.SnapshotInfo) {
	if s == nil {
		h[hSnapOffset] = "-1"
		return
	}
	h[hSnapOffset], h[hSnapDigest] = s.Offset.String(), s.Digest
}

func (t EngineTarget) publishSnapshot(c model.PublishSnapshot) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	at, err := enginePosition(c.Offset, c.Record)
	if err != nil {
		return t.result(err, nil)
	}
	req := engine.SnapshotRequest{At: at, ContentType: deref(c.ContentType), Body: c.Body, Match: c.Match}
	info, err := t.E.PublishSnapshot(c.Stream, req)
	return t.result(err, func(o *Observation) {
		o.Status = 204
		snapshotHeaders(o.Header, &info)
		t.advertise(o, c.Stream)
	})
}

func (t EngineTarget) getSnapshot(c model.GetSnapshot) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	var at *model.Offset
	if c.Offset != nil {
		o, err := model.ParseOffset(*c.Offset)
		if err != nil {
			return t.result(err, nil)
		}
		at = &o
	}
	info, body, err := t.E.Snapshot(c.Stream, at)
	return t.result(err, func(o *Observation) {
		snapshotHeaders(o.Header, info.Snapshot)
		if at == nil {
			o.Status, o.Header[hLocation] = 307, snapshotLocation(info.Snapshot.Offset)
			return
		}
		o.Status, o.Body = 200, string(body)
		o.Header[hContentType] = info.Snapshot.ContentType
		o.Header[hNext] = info.Snapshot.Offset.String()
		o.Header[hUpToDate] = strconv.FormatBool(info.Snapshot.Offset == info.Tail)
		recordBounds(o.Header, info)
	})
}

func (t EngineTarget) setRetention(c model.SetRetention) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	at, err := enginePosition(c.Offset, c.Record)
	if err != nil {
		return t.result(err, nil)
	}
	info, err := t.E.SetRetention(c.Stream, at)
	return t.result(err, func(o *Observation) {
		o.Status, o.Header[hNext] = 204, info.Tail.String()
		recordBounds(o.Header, info)
	})
}

// bootstrap reads the whole bootstrap as httpd streams it: the snapshot part, then one
// part per message (JSON messages without their canonical "\n").
func (t EngineTarget) bootstrap(c model.Bootstrap) Observation {
	if err := checkKey(c.Stream); err != nil {
		return t.result(err, nil)
	}
	if c.Live != nil {
		return t.result(model.ErrBadLive, nil)
	}
	b, err := t.E.OpenBootstrap(c.Stream)
	if err != nil {
		return t.result(err, nil)
	}
	defer b.Close()
	var parts []PartObs
	first := PartObs{ContentType: model.DefaultContentType, Body: string(b.Body)}
	if b.Snapshot != nil {
		first.ContentType = b.Snapshot.ContentType
	}
	parts = append(parts, first)
	for {
		res, err := b.Next(1 << 20)
		if err != nil {
			return t.result(err, nil)
		}
		if len(res.Data) == 0 {
			break
		}
		start := 0
		for _, end := range res.Ends {
			msg := res.Data[start:end]
			if res.Info.JSON() {
				msg = bytes.TrimSuffix(msg, []byte("\n"))
			}
			parts = append(parts, PartObs{ContentType: res.Info.ContentType, Body: string(msg)})
			start = end
		}
	}
	return t.result(nil, func(o *Observation) {
		o.Status, o.Header[hContentType], o.Parts = 200, "multipart/mixed", parts
		o.Header[hNext], o.Header[hUpToDate] = b.Info.Tail.String(), "true"
		if b.Info.Closed {
			o.Header[hClosed] = "true"
		}
		snapshotHeaders(o.Header, b.Snapshot)
		recordBounds(o.Header, b.Info)
		if b.Info.JSON() {
			o.Header[hRecStart] = u(b.FromRec)
		}
	})
}
