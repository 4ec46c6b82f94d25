package model

import "testing"

// Attributes given at creation are part of the configuration a re-create compares,
// after normalization: {} equals none, unknown top-level fields are dropped, key order
// does not matter; anything else that differs is 409. Spec: extension §5.1, §5.2.
func TestRecreateComparesNormalizedAttributes(t *testing.T) {
	m := newMachine(t)
	c := create("text/plain", "")
	c.Attrs = Str(`{"title":"t","metadata":{"b":1,"a":2}}`)
	m.want(c, StatusCreated)
	for _, same := range []string{`{"metadata":{"a":2,"b":1},"title":"t"}`, `{"title":"t","x":1,"metadata":{"b":1,"a":2}}`} {
		c.Attrs = Str(same)
		m.want(c, StatusOK)
	}
	c.Attrs = Str(`{"title":"u","metadata":{"b":1,"a":2}}`)
	m.wantErr(c, StatusConflict, ErrConfigMismatch)
	c.Attrs = nil
	m.wantErr(c, StatusConflict, ErrConfigMismatch)

	plain := create("text/plain", "")
	plain.Stream.Stream = "p"
	m.want(plain, StatusCreated)
	for _, none := range []string{`{}`, `{"other":1}`, `{"title":null}`} {
		plain.Attrs = Str(none)
		m.want(plain, StatusOK)
	}
	plain.Attrs = Str(`{"title":5}`)
	m.wantErr(plain, StatusBadRequest, ErrBadAttrs)
}

// GET /attrs returns the stored object, {} when none; PUT /attrs replaces it whole,
// {} clears it, and it works on a closed stream without touching its content.
// Spec: extension §5.3, §5.4.
func TestAttributesReplaceAndClear(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "x"), StatusCreated)
	if got := string(m.want(GetAttrs{Stream: sk}, StatusOK).Body); got != "{}" {
		t.Fatalf("no attributes: %q", got)
	}
	put := PutAttrs{Stream: sk, ContentType: Str("application/json"), Body: []byte(`{"metadata":{"k":1},"title":"a"}`)}
	m.want(put, StatusNoContent)
	put.Body = []byte(`{"title":"b"}`)
	m.want(put, StatusNoContent)
	if got := string(m.want(GetAttrs{Stream: sk}, StatusOK).Body); got != `{"title":"b"}` {
		t.Fatalf("replace, not merge: %q", got)
	}
	m.want(closeOnly(), StatusNoContent)
	put.Body = []byte(`{}`)
	m.want(put, StatusNoContent)
	if got := string(m.want(GetAttrs{Stream: sk}, StatusOK).Body); got != "{}" {
		t.Fatalf("{} clears: %q", got)
	}
	if got := m.readAll(); got != "x" {
		t.Fatalf("attributes changed the content: %q", got)
	}
}

// PUT /attrs judges its Content-Type and body before looking the stream up.
// Spec: extension §5.4.
func TestPutAttrsSyntaxComesFirst(t *testing.T) {
	m := newMachine(t)
	missing := PutAttrs{Stream: StreamKey{Bucket: "test", Stream: "nope"}, Body: []byte(`{}`)}
	m.wantErr(missing, StatusBadRequest, ErrMissingContentType)
	missing.ContentType = Str("text/plain")
	m.wantErr(missing, StatusBadRequest, ErrBadAttrs)
	missing.ContentType = Str("application/json")
	missing.Body = []byte(`[]`)
	m.wantErr(missing, StatusBadRequest, ErrBadAttrs)
	missing.Body = []byte(`{}`)
	m.wantErr(missing, StatusNotFound, ErrStreamNotFound)
}
