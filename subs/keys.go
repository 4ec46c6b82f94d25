package subs

import (
	"context"
	"fmt"
)

// loadKeys reads the keys from the Store, generates what is missing (first start) and saves
// it before any use, so the JWKS, kids and tokens are the same after a restart.
func (w *Worker) loadKeys(ctx context.Context) error {
	k, err := w.store.LoadKeys(ctx)
	if err != nil {
		return fmt.Errorf("subs: loading keys: %w", err)
	}
	k, changed, err := ensureKeys(k, w.clock.Now(), w.rnd)
	if err != nil {
		return err
	}
	if changed {
		if err := w.store.SaveKeys(ctx, k); err != nil {
			return fmt.Errorf("subs: saving keys: %w", err)
		}
	}
	active, _ := activeKey(k.Signing)
	w.keysMu.Lock()
	w.keys, w.sign = k, newSigner(active)
	w.keysMu.Unlock()
	return nil
}

// JWKS returns the JWK Set document of the public signing keys (PROTOCOL §6.5); serve it
// with JWKSContentType and JWKSCacheControl. Valid after Start.
func (w *Worker) JWKS() []byte {
	w.keysMu.RLock()
	defer w.keysMu.RUnlock()
	return JWKSDocument(w.keys.Signing, w.clock.Now())
}

// KeyID returns the kid of the active signing key, for a webhook document's
// webhook.signing.kid (PROTOCOL §6.3). Valid after Start.
func (w *Worker) KeyID() string {
	w.keysMu.RLock()
	defer w.keysMu.RUnlock()
	return w.sign.kid
}

func (w *Worker) signer() signer {
	w.keysMu.RLock()
	defer w.keysMu.RUnlock()
	return w.sign
}

func (w *Worker) tokenKey() []byte {
	w.keysMu.RLock()
	defer w.keysMu.RUnlock()
	return w.keys.TokenKey
}
