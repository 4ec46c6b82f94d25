package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
)

// rawMsg is one stored JetStream message.
type rawMsg struct {
	Seq    uint64
	Header nats.Header
	Data   []byte
}

// msgGet is a JetStream message get request (STREAM.MSG.GET, DIRECT.GET).
type msgGet struct {
	Seq      uint64 `json:"seq,omitempty"`
	LastFor  string `json:"last_by_subj,omitempty"`
	NextFor  string `json:"next_by_subj,omitempty"`
	Batch    int    `json:"batch,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
	UpToSeq  uint64 `json:"up_to_seq,omitempty"`
}

var errNotFound = errors.New("jsstore: no such message")

const errCodeNoMessage = 10037

// getMsg gets one message from partition k's stream leader: never stale.
// Errors: errNotFound, JetStream errors.
func (s *Store) getMsg(ctx context.Context, k int, req msgGet) (*rawMsg, error) {
	body, _ := json.Marshal(req)
	resp, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+s.StreamName(k), body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Hdrs []byte `json:"hdrs"`
			Data []byte `json:"data"`
		} `json:"message"`
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, err
	}
	switch {
	case r.Error != nil && r.Error.ErrCode == errCodeNoMessage:
		return nil, errNotFound
	case r.Error != nil:
		return nil, fmt.Errorf("jsstore: get from %s: %s", s.StreamName(k), r.Error.Description)
	case r.Message == nil:
		return nil, fmt.Errorf("jsstore: get from %s: empty answer", s.StreamName(k))
	}
	m := &rawMsg{Seq: r.Message.Seq, Data: r.Message.Data}
	if len(r.Message.Hdrs) > 0 {
		if m.Header, err = nats.DecodeHeadersMsg(r.Message.Hdrs); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// directBatch gets up to n messages of subj from seq up to seq upTo (about maxBytes) by
// direct get, from any replica: a replica that lags returns fewer, never wrong ones (its
// store is a prefix of the log).
func (s *Store) directBatch(ctx context.Context, k int, subj string, seq, upTo uint64, n, maxBytes int) ([]rawMsg, error) {
	if s.noDirect {
		return nil, nil
	}
	inbox := s.nc.NewRespInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	body, _ := json.Marshal(msgGet{Seq: seq, NextFor: subj, Batch: n, MaxBytes: maxBytes, UpToSeq: upTo})
	if err := s.nc.PublishRequest("$JS.API.DIRECT.GET."+s.StreamName(k), inbox, body); err != nil {
		return nil, err
	}
	var out []rawMsg
	for len(out) < n {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return out, err
		}
		if m.Header.Get("Status") != "" { // 204 end of batch, 404 none, 408 bad request
			break
		}
		sq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
		if err != nil {
			return out, fmt.Errorf("jsstore: direct get without a sequence")
		}
		out = append(out, rawMsg{Seq: sq, Header: m.Header, Data: m.Data})
	}
	return out, nil
}

// eachFrame visits the frames of sid's log in (from, last] in order until fn returns
// false: in batches from any replica, each gap a lagging replica leaves filled from the
// leader (last is known to be a frame of sid, so a short answer is never the end).
func (s *Store) eachFrame(ctx context.Context, k int, sid, from, last uint64, fn func(*frame) bool) error {
	subj := s.logSubj(k, sid)
	for seq := from; seq <= last; {
		batch, err := s.directBatch(ctx, k, subj, seq, last, 64, 4<<20)
		if len(batch) == 0 {
			m, gerr := s.getMsg(ctx, k, msgGet{Seq: seq, NextFor: subj})
			if errors.Is(gerr, errNotFound) {
				return nil
			}
			if gerr != nil {
				return errors.Join(gerr, err)
			}
			batch = []rawMsg{*m}
		}
		for i := range batch {
			if batch[i].Seq > last {
				return nil
			}
			f, err := s.decodeFrame(ctx, k, batch[i].Seq, batch[i].Data)
			if err != nil {
				return fmt.Errorf("frame %d: %w", batch[i].Seq, err)
			}
			if !fn(f) {
				return nil
			}
			seq = batch[i].Seq + 1
		}
	}
	return nil
}
