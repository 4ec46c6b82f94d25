package fuzz

import (
	"errors"
	"testing"

	"github.com/dsd-project/dsd/difftest"
	"github.com/dsd-project/dsd/model"
)

// FuzzForkHeaders: fork requests (B-4.2) with any Stream-Forked-From, Stream-Fork-Offset
// and Stream-Fork-Sub-Offset (each present or absent), Content-Type or not, of a text
// or a JSON source holding several append units, get the same answer from the model,
// the engine and httpd, and so do a read of the fork, a repeat of the request (200 or
// 409), a delete of the source (soft while the fork lives) and a read of it (410).
func FuzzForkHeaders(f *testing.F) {
	t5 := model.Offset(5).String()
	f.Add(uint8(7), "/forks/src", t5, "3", false)
	f.Add(uint8(7), "/forks/src", model.ZeroOffset.String(), "5", false)
	f.Add(uint8(3), "/forks/src", " "+t5+" ", "", false)
	f.Add(uint8(5), "/forks/src", "", "1", false)
	f.Add(uint8(1), "/forks/src", "", "", true)
	f.Add(uint8(7), "/forks/src", model.Offset(4).String(), "2", true)
	f.Add(uint8(3), "forks/src", "-1", "", false)
	f.Add(uint8(15), "/forks/%73rc", "9999999999999999_9999999999999999", "05", true)
	f.Fuzz(func(t *testing.T, present uint8, from, offset, sub string, isJSON bool) {
		for _, v := range []string{from, offset, sub} {
			if !validHeader("X", v) {
				return // net/http would refuse the request
			}
		}
		opt := func(bit uint8, v string) *string {
			if present&bit == 0 {
				return nil
			}
			return &v
		}
		h := sharedHarness(t)
		src := model.StreamKey{Bucket: "forks", Stream: "src"}
		fk := model.StreamKey{Bucket: "forks", Stream: "f"}
		ct, bodies := model.Str("text/plain"), []string{"hello", "world", "!"}
		if isJSON {
			ct, bodies = model.Str("application/json"), []string{`[1,2,3]`, `"x"`, `[{"a":4},5]`}
		}
		fork := model.CreateStream{Stream: fk, ForkedFrom: opt(1, from), ForkOffset: opt(2, offset),
			ForkSubOffset: opt(4, sub)}
		if present&8 != 0 {
			fork.ContentType = ct
		}
		script := difftest.Script{
			model.CreateBucket{Bucket: "forks"},
			model.CreateStream{Stream: src, ContentType: ct, Body: []byte(bodies[0])},
			model.AppendStream{Stream: src, ContentType: ct, Body: []byte(bodies[1])},
			model.AppendStream{Stream: src, ContentType: ct, Body: []byte(bodies[2])},
			fork,
			model.ReadStream{Stream: fk},
			fork,
			model.DeleteStream{Stream: src},
			model.ReadStream{Stream: src},
			model.ReadStream{Stream: fk},
		}
		err := h.Check(script, difftest.DefaultStart())
		var tol *difftest.Tolerated
		if errors.As(err, &tol) {
			t.Skip(tol.Error())
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
