package engine

import (
	"strings"
	"testing"

	"github.com/dsd-project/dsd/model"
)

// A read of one cached message shares the cache's buffer, capped: appending to the result
// copies, and neither later appends to the stream nor a caller's append change what the
// cache serves next (issue 19 target 5: catch-up reads without a copy).
func TestSingleCachedMessageRead(t *testing.T) {
	te := newTestEngine(t)
	body := strings.Repeat("a", 200<<10)
	te.mustCreate("s", "text/plain", body)
	res := te.readAll("s")
	if string(res.Data) != body || res.Next != off(uint64(len(body))) || !res.UpToDate {
		t.Fatalf("read: %d bytes, %+v", len(res.Data), res.Next)
	}
	if cap(res.Data) != len(res.Data) {
		t.Fatalf("shared read has cap %d > len %d: an append would write into the cache", cap(res.Data), len(res.Data))
	}
	if again := te.readAll("s"); &again.Data[0] != &res.Data[0] {
		t.Fatal("two reads of one cached message copied it")
	}
	_ = append(res.Data, 'X')
	te.mustAppend("s", "text/plain", "bc")
	again := te.readAll("s")
	if string(again.Data) != body+"bc" || again.Next != off(uint64(len(body)+2)) {
		t.Fatalf("read after append: %d bytes ending %q", len(again.Data), again.Data[len(again.Data)-3:])
	}
	from, err := te.Read(key("s"), ReadRequest{From: model.OffsetSpec{Kind: model.SpecAt, At: off(uint64(len(body)))}, Bounds: true})
	if err != nil || string(from.Data) != "bc" || len(from.Ends) != 1 || from.Ends[0] != 2 {
		t.Fatalf("read of the last message: %q %v %v", from.Data, from.Ends, err)
	}
}
