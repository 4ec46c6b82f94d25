package jsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/engine/storage"
)

// JetStream error codes jsstore acts on (design §4.4).
const (
	errWrongLastSeq   = 10071 // "wrong last sequence: N": another message is there
	errInFlight       = 10164 // "wrong last sequence" (no number): a CAS publish in flight
	errClusterNotLead = 10008 // cluster not available: not proposed, retried
)

func (s *Store) logSubj(k int, sid uint64) string { return fmt.Sprintf("%s.%d.%016x", s.root, k, sid) }

func (s *Store) nameSubj(k int, name string) string {
	h := sha256.Sum256([]byte(name))
	return fmt.Sprintf("%s.%d.n.%s", s.root, k, hex.EncodeToString(h[:16]))
}

func (s *Store) bucketSubj(k int, id string) string {
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("%s.%d.b.%s", s.root, k, hex.EncodeToString(h[:16]))
}

// msgID returns a Nats-Msg-Id no other message of any store uses.
func (s *Store) msgID() string {
	return s.opts.NodeID + "-" + s.nonce + "-" + strconv.FormatUint(s.counter.Add(1), 10)
}

// pub is one message to publish and how: cas (expect is the subject's last sequence) or
// not, rolled up (the subject keeps only this message) or not.
type pub struct {
	k      int
	subj   string
	data   []byte
	cas    bool
	expect uint64
	rollup bool
}

type pubAck struct {
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
	Error     *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error,omitempty"`
}

// publish sends p until its outcome is known and returns the sequence it committed at.
// Errors: storage.ErrConflict (another message follows the expected sequence),
// storage.ErrUnknown (unresolved at ResolveTimeout), other errors: a store failure.
func (s *Store) publish(p pub) (uint64, error) {
	id := s.msgID()
	m := nats.NewMsg(p.subj)
	m.Data = p.data
	m.Header.Set(jetstream.MsgIDHeader, id)
	if p.cas {
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(p.expect, 10))
	}
	if p.rollup {
		m.Header.Set("Nats-Rollup", "sub")
	}
	deadline := time.Now().Add(s.opts.ResolveTimeout)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && time.Now().After(deadline) {
			return 0, fmt.Errorf("%w: %s unresolved after %s", storage.ErrUnknown, p.subj, s.opts.ResolveTimeout)
		}
		resp, err := s.nc.RequestMsg(m, s.opts.PublishTimeout)
		if err == nil && s.dropAck != nil && s.dropAck(p.subj, attempt) {
			resp, err = nil, nats.ErrTimeout // tests: the ack is lost
		}
		if err != nil {
			if errors.Is(err, nats.ErrConnectionClosed) {
				return 0, fmt.Errorf("%w: %s: %v", storage.ErrUnknown, p.subj, err)
			}
			s.resends.Add(1)
			time.Sleep(200 * time.Millisecond) // in doubt: resend the identical message
			continue
		}
		var a pubAck
		if err := json.Unmarshal(resp.Data, &a); err != nil {
			return 0, fmt.Errorf("jsstore: publish %s: bad ack %q", p.subj, resp.Data)
		}
		if a.Error == nil {
			return a.Seq, nil
		}
		switch a.Error.ErrCode {
		case errInFlight:
			s.inFlight.Add(1)
			time.Sleep(100 * time.Microsecond) // never proposed: resend now
		case errClusterNotLead:
			s.resends.Add(1)
			time.Sleep(200 * time.Millisecond)
		case errWrongLastSeq:
			if !p.cas {
				return 0, fmt.Errorf("jsstore: publish %s: %s", p.subj, a.Error.Description)
			}
			seq, ours, err := s.committedAs(p, id)
			switch {
			case err != nil:
				return 0, fmt.Errorf("%w: %s: %v", storage.ErrUnknown, p.subj, err)
			case ours:
				return seq, nil
			}
			s.conflict.Add(1)
			return 0, fmt.Errorf("%w: %s: %s", storage.ErrConflict, p.subj, a.Error.Description)
		default:
			return 0, fmt.Errorf("jsstore: publish %s: %s (err_code %d)", p.subj, a.Error.Description, a.Error.ErrCode)
		}
	}
}

// committedAs looks at the first message after p's expected sequence on its subject:
// by CAS at most one message follows it, so whether it carries id is final.
func (s *Store) committedAs(p pub, id string) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.PublishTimeout)
	defer cancel()
	m, err := s.getMsg(ctx, p.k, msgGet{Seq: p.expect + 1, NextFor: p.subj})
	if errors.Is(err, errNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return m.Seq, m.Header.Get(jetstream.MsgIDHeader) == id, nil
}
