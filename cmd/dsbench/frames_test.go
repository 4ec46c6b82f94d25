package main

import (
	"bytes"
	"testing"
)

func TestEncodeBatchWireFormat(t *testing.T) {
	// Extension §4.1: uint32_be payload_len, payload bytes, repeated.
	got := encodeBatch([][]byte{[]byte("abc"), bytes.Repeat([]byte{0xff}, 258)})
	want := append([]byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 1, 2}, bytes.Repeat([]byte{0xff}, 258)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeBatch:\n got % x\nwant % x", got[:16], want[:16])
	}
}

func TestDecodeBatchRoundTripAndRejects(t *testing.T) {
	payloads := [][]byte{[]byte("one"), []byte("\x00\x01two"), bytes.Repeat([]byte("z"), 70000)}
	back, err := decodeBatch(encodeBatch(payloads))
	if err != nil || len(back) != 3 || !bytes.Equal(back[1], payloads[1]) || len(back[2]) != 70000 {
		t.Fatalf("round trip: %d frames, err %v", len(back), err)
	}
	for name, body := range map[string][]byte{
		"short header": {0, 0, 1},
		"zero length":  {0, 0, 0, 0},
		"truncated":    {0, 0, 0, 5, 'a'},
	} {
		if _, err := decodeBatch(body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseAcksCountsAndTolerance(t *testing.T) {
	body := []byte(`[{"status":204,"stream_next_offset":"0000000000000000_0000000000000003"},
		{"status":409,"stream_closed":true,"error_code":"STREAM_CLOSED","error":"closed","stream_next_offset":3}]`)
	acks, err := parseAcks(body, 2)
	if err != nil {
		t.Fatal(err)
	}
	if acks[0].Status != 204 || string(acks[0].StreamNextOffset) != `"0000000000000000_0000000000000003"` ||
		acks[1].Status != 409 || !acks[1].StreamClosed || acks[1].ErrorCode != "STREAM_CLOSED" {
		t.Fatalf("acks = %+v", acks)
	}
	if _, err := parseAcks(body, 3); err == nil {
		t.Fatal("parseAcks accepted 2 acks for 3 frames")
	}
	if _, err := parseAcks([]byte(`{"error":{}}`), 1); err == nil {
		t.Fatal("parseAcks accepted an object")
	}
}
