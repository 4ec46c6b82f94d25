package model

import "testing"

// An incomplete but completable UTF-8 sequence at the end is held; complete text,
// invalid bytes and ASCII are not. Spec: D9.
func TestHeldTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"caf", 0}, {"caf\xc3", 1}, {"caf\xc3\xa9", 0}, {"\xe2\x82", 2}, {"\xe2", 1},
		{"\xf0\x9f\x98", 3}, {"\xf0\x9f\x98\x80", 0}, {"a\xff", 0}, {"a\x80", 0},
		{"\xe0\x80", 0}, {"\xc0", 0}, {"", 0}, {"\xc3\xa9\xc3", 1},
	} {
		if got := HeldTail([]byte(c.in)); got != c.want {
			t.Errorf("HeldTail(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// A read may start at the held position of a text stream's message, and nowhere else
// inside a message; on a binary stream never. Spec: D9, A-15.
func TestReadFromHeldPosition(t *testing.T) {
	m := newMachine(t)
	m.want(create("text/plain", "caf\xc3"), StatusCreated)
	m.want(post("text/plain", "\xa9!"), StatusNoContent)
	if got := m.want(read(Offset(3).String()), StatusOK).Body; string(got) != "\xc3\xa9!" {
		t.Fatalf("read from the held position: %q", got)
	}
	m.wantErr(read(Offset(2).String()), StatusBadRequest, ErrOffsetNotBoundary)
	m.wantErr(read(Offset(5).String()), StatusBadRequest, ErrOffsetNotBoundary)
	b := newMachine(t)
	b.want(create("application/octet-stream", "caf\xc3"), StatusCreated)
	b.wantErr(read(Offset(3).String()), StatusBadRequest, ErrOffsetNotBoundary)
}

// A read from a held position carries the message after the held bytes even when that
// message alone exceeds the chunk size: the held bytes alone are not a chunk. Spec: D9, A-16.
func TestReadFromHeldPositionTakesTheNextMessage(t *testing.T) {
	m := newMachine(t)
	m.s = NewState(Config{ReadChunkBytes: 4})
	m.want(CreateBucket{Bucket: "test"}, StatusCreated)
	m.want(create("text/plain", "caf\xc3"), StatusCreated)
	m.want(post("text/plain", "\xa9 and more than four bytes"), StatusNoContent)
	m.want(post("text/plain", "!"), StatusNoContent)
	res := m.want(read(Offset(3).String()), StatusOK)
	if string(res.Body) != "\xc3\xa9 and more than four bytes" || res.UpToDate {
		t.Fatalf("read from the held position: %q up-to-date %v", res.Body, res.UpToDate)
	}
}
