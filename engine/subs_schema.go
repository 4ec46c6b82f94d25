package engine

import (
	"bytes"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/dsd-project/dsd/model"
	"github.com/dsd-project/dsd/subs"
)

// The persisted kinds of subscriptions (schema.go: buckets subs and links, system
// sign_keys). One small function per bbolt access, so that moving them behind a storage
// interface is mechanical.

// subsRead runs fn in a read transaction of committed state; subsWrite commits write as
// one op on the commit queue and waits until it is durable. Every subscription read and
// write goes through these two (and appendWakeEvent's append), so that moving them behind
// a storage interface touches this file only.
func (e *Engine) subsRead(fn func(tx *bolt.Tx) error) error { return e.db.View(fn) }

func (e *Engine) subsWrite(write func(tx *bolt.Tx) error) error {
	return e.submit(&op{write: write})
}

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

func subKey(k subs.Key) []byte { return []byte(k.Bucket + "\x00" + k.ID) }

func linkPrefix(k subs.Key) []byte { return []byte(k.Bucket + "\x00" + k.ID + "\x00") }

func linkKey(k subs.Key, path string) []byte { return append(linkPrefix(k), path...) }

// getSub reads a subscription record (nil when absent).
func getSub(tx *bolt.Tx, k subs.Key) (*subRecord, error) {
	v := tx.Bucket(bktSubs).Get(subKey(k))
	if v == nil {
		return nil, nil
	}
	var r subRecord
	return &r, json.Unmarshal(v, &r)
}

// putSub writes a subscription record.
func putSub(tx *bolt.Tx, k subs.Key, r *subRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Bucket(bktSubs).Put(subKey(k), b)
}

// forEachSub visits every subscription record.
func forEachSub(tx *bolt.Tx, fn func(k subs.Key, r *subRecord) error) error {
	return tx.Bucket(bktSubs).ForEach(func(key, v []byte) error {
		bucket, id, _ := bytes.Cut(key, []byte{0})
		var r subRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		return fn(subs.Key{Bucket: string(bucket), ID: string(id)}, &r)
	})
}

// getLinks reads every link record of a subscription, by path.
func getLinks(tx *bolt.Tx, k subs.Key) (map[string]linkRecord, error) {
	out := map[string]linkRecord{}
	p := linkPrefix(k)
	c := tx.Bucket(bktLinks).Cursor()
	for key, v := c.Seek(p); key != nil && bytes.HasPrefix(key, p); key, v = c.Next() {
		var l linkRecord
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, err
		}
		out[string(key[len(p):])] = l
	}
	return out, nil
}

// putLink writes one link record.
func putLink(tx *bolt.Tx, k subs.Key, path string, l linkRecord) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return tx.Bucket(bktLinks).Put(linkKey(k, path), b)
}

// deleteLink removes one link record.
func deleteLink(tx *bolt.Tx, k subs.Key, path string) error {
	return tx.Bucket(bktLinks).Delete(linkKey(k, path))
}

// deleteLinks removes every link record of a subscription.
func deleteLinks(tx *bolt.Tx, k subs.Key) error {
	p := linkPrefix(k)
	c := tx.Bucket(bktLinks).Cursor()
	for key, _ := c.Seek(p); key != nil && bytes.HasPrefix(key, p); key, _ = c.Seek(p) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// getSignKeys reads the signing and token keys (zero Keys when none were saved).
func getSignKeys(tx *bolt.Tx) (subs.Keys, error) {
	var k subs.Keys
	v := tx.Bucket(bktSystem).Get(keySignKeys)
	if v == nil {
		return k, nil
	}
	return k, json.Unmarshal(v, &k)
}

// putSignKeys writes the signing and token keys.
func putSignKeys(tx *bolt.Tx, k subs.Keys) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return tx.Bucket(bktSystem).Put(keySignKeys, b)
}

// streamNames lists the bucket-local names of a bucket's bound streams starting with
// prefix.
func streamNames(tx *bolt.Tx, bucket, prefix string) []string {
	var out []string
	p := []byte(bucket + "/" + prefix)
	c := tx.Bucket(bktNames).Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		out = append(out, string(k[len(bucket)+1:]))
	}
	return out
}

// deleteBucketSubs removes every subscription record and link record of a bucket.
func deleteBucketSubs(tx *bolt.Tx, bucket string) error {
	p := []byte(bucket + "\x00")
	for _, name := range [][]byte{bktSubs, bktLinks} {
		c := tx.Bucket(name).Cursor()
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Seek(p) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	return nil
}
