package engine

import (
	"encoding/json"
	"strings"

	"github.com/dsd-project/dsd/engine/storage"
	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// The persisted kinds of subscriptions: records in the storage backend's subscription key
// spaces (storage.SpaceSubs, SpaceLinks, SpaceKeys), written as Change.Subs in the
// transaction of the change they belong to, read through Backend.KV and KVScan.

// subRecord is one subscription, live or tombstoned (base protocol §6.2-§6.3, D10).
type subRecord struct {
	Config      model.SubscriptionConfig `json:"config"`
	Hash        string                   `json:"hash"`
	CreatedMs   int64                    `json:"created"`
	Incarnation uint64                   `json:"inc"`
	CallbackURL string                   `json:"callback_url,omitempty"`
	JWKSURL     string                   `json:"jwks_url,omitempty"`
	State       subs.State               `json:"state"`
	DeletedMs   int64                    `json:"deleted,omitempty"` // a tombstone when set
}

func (r *subRecord) live() bool { return r != nil && r.DeletedMs == 0 }

// linkRecord is the cursor of one link: the acknowledged position of stream incarnation
// SID (0: the stream did not exist when the link was made). Explicit marks an explicit
// link; a glob link only has a record once it was backfilled or acknowledged.
type linkRecord struct {
	Explicit bool   `json:"explicit,omitempty"`
	SID      uint64 `json:"sid"`
	Acked    uint64 `json:"acked"`
}

var keySignKeys = []byte("sign_keys")

func subKey(k subs.Key) []byte { return []byte(k.Bucket + "\x00" + k.ID) }

func linkPrefix(k subs.Key) []byte { return []byte(k.Bucket + "\x00" + k.ID + "\x00") }

func linkKey(k subs.Key, path string) []byte { return append(linkPrefix(k), path...) }

// subsWrite commits puts as one op on the commit queue and waits until they are durable.
func (e *Engine) subsWrite(puts ...storage.KVPut) error {
	return e.submit(&op{ch: storage.Change{Subs: puts}})
}

// getSub reads a subscription record (nil when absent).
func (e *Engine) getSub(k subs.Key) (*subRecord, error) {
	v, err := e.st.KV(storage.SpaceSubs, subKey(k))
	if err != nil || v == nil {
		return nil, err
	}
	var r subRecord
	return &r, json.Unmarshal(v, &r)
}

// putSub writes a subscription record.
func putSub(k subs.Key, r *subRecord) storage.KVPut {
	b, _ := json.Marshal(r)
	return storage.KVPut{Space: storage.SpaceSubs, Key: subKey(k), Value: b}
}

// forEachSub visits every subscription record.
func (e *Engine) forEachSub(fn func(k subs.Key, r *subRecord) error) error {
	var ferr error
	err := e.st.KVScan(storage.SpaceSubs, nil, func(key, v []byte) bool {
		bucket, id, _ := strings.Cut(string(key), "\x00")
		var r subRecord
		if ferr = json.Unmarshal(v, &r); ferr != nil {
			return false
		}
		ferr = fn(subs.Key{Bucket: bucket, ID: id}, &r)
		return ferr == nil
	})
	if err != nil {
		return err
	}
	return ferr
}

// getLinks reads every link record of a subscription, by path.
func (e *Engine) getLinks(k subs.Key) (map[string]linkRecord, error) {
	out := map[string]linkRecord{}
	p := linkPrefix(k)
	var jerr error
	err := e.st.KVScan(storage.SpaceLinks, p, func(key, v []byte) bool {
		var l linkRecord
		if jerr = json.Unmarshal(v, &l); jerr != nil {
			return false
		}
		out[string(key[len(p):])] = l
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, jerr
}

// putLink writes one link record.
func putLink(k subs.Key, path string, l linkRecord) storage.KVPut {
	b, _ := json.Marshal(l)
	return storage.KVPut{Space: storage.SpaceLinks, Key: linkKey(k, path), Value: b}
}

// deleteLink removes one link record.
func deleteLink(k subs.Key, path string) storage.KVPut {
	return storage.KVPut{Space: storage.SpaceLinks, Key: linkKey(k, path)}
}

// deleteLinks removes every link record of a subscription.
func deleteLinks(k subs.Key) storage.KVPut {
	return storage.KVPut{Space: storage.SpaceLinks, Key: linkPrefix(k), Prefix: true}
}

// deleteBucketSubs removes every subscription record and link record of a bucket.
func deleteBucketSubs(bucket string) []storage.KVPut {
	p := []byte(bucket + "\x00")
	return []storage.KVPut{{Space: storage.SpaceSubs, Key: p, Prefix: true},
		{Space: storage.SpaceLinks, Key: p, Prefix: true}}
}

// getSignKeys reads the signing and token keys (zero Keys when none were saved).
func (e *Engine) getSignKeys() (subs.Keys, error) {
	var k subs.Keys
	v, err := e.st.KV(storage.SpaceKeys, keySignKeys)
	if err != nil || v == nil {
		return k, err
	}
	return k, json.Unmarshal(v, &k)
}

// putSignKeys writes the signing and token keys.
func putSignKeys(k subs.Keys) storage.KVPut {
	b, _ := json.Marshal(k)
	return storage.KVPut{Space: storage.SpaceKeys, Key: keySignKeys, Value: b}
}

// streamNames lists the bucket-local names of a bucket's bound streams starting with
// prefix.
func (e *Engine) streamNames(bucket, prefix string) ([]string, error) {
	var out []string
	err := e.st.Names(bucket+"/"+prefix, "", func(name string, _ *storage.Meta) bool {
		out = append(out, name[len(bucket)+1:])
		return true
	})
	return out, err
}
