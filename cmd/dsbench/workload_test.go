package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests drive the workloads' request loops against small fakes and check what they
// count and send; they assert nothing about speed.

func testTarget(t *testing.T, h http.Handler, conns int) *Target {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return newTarget(Common{Base: srv.URL, Prefix: "t", Timeout: 5 * time.Second}, conns)
}

func TestAppendLoopProducerSeqsAreGaplessPerStream(t *testing.T) {
	var mu sync.Mutex
	next := map[string]int{} // producer|stream -> expected seq
	bad := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get("Producer-Id") + "|" + r.URL.Path
		seq, err := strconv.Atoi(r.Header.Get("Producer-Seq"))
		mu.Lock()
		defer mu.Unlock()
		if err != nil || r.Header.Get("Producer-Epoch") != "0" || len(body) != 50 || r.Header.Get("Content-Type") != "application/json" {
			bad++
			w.WriteHeader(400)
			return
		}
		if seq != next[key] {
			w.Header().Set("Producer-Expected-Seq", strconv.Itoa(next[key]))
			w.WriteHeader(409)
			return
		}
		next[key]++
		w.WriteHeader(200)
	})
	tg := testTarget(t, h, 4)
	st := appendLoop(context.Background(), tg, appendConfig{Streams: 3, Conns: 4, Size: 50, loopWindow: loopWindow{Duration: 500 * time.Millisecond}, // long enough for each conn to walk all 3 streams on a loaded machine
		Producer: true, JSON: true}, "application/json")
	if bad != 0 || st.Statuses.Errors() != 0 {
		t.Fatalf("malformed requests %d, statuses %v", bad, st.Statuses)
	}
	if st.Ops == 0 || st.Records != st.Ops || st.Bytes != 50*st.Ops {
		t.Fatalf("ops %d records %d bytes %d", st.Ops, st.Records, st.Bytes)
	}
	if len(next) != 12 { // 4 producers x 3 streams, each walked in turn
		t.Fatalf("producer/stream pairs used: %d, want 12", len(next))
	}
}

func TestBatchLoopCountsAcknowledgedFrames(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		frames, err := decodeBatch(body)
		if err != nil || !strings.HasSuffix(r.URL.Path, "/append-batch") || r.Header.Get("Content-Type") != "text/plain" {
			http.Error(w, "bad batch", 400)
			return
		}
		acks := make([]batchAck, len(frames))
		for i := range acks {
			acks[i] = batchAck{Status: 204, StreamNextOffset: json.RawMessage(`"x"`)}
		}
		acks[len(acks)-1].Status = 409 // the last frame of every batch fails
		json.NewEncoder(w).Encode(acks)
	})
	tg := testTarget(t, h, 2)
	c := batchConfig{Streams: 2, Conns: 2, Frames: 5, FrameSize: 10, loopWindow: loopWindow{Duration: 50 * time.Millisecond}}
	body := encodeBatch([][]byte{appendPayload(10, false), appendPayload(10, false), appendPayload(10, false),
		appendPayload(10, false), appendPayload(10, false)})
	frames, st := batchLoop(context.Background(), tg, c, "text/plain", body)
	if st.Ops == 0 || st.Statuses.Errors() != 0 {
		t.Fatalf("ops %d statuses %v", st.Ops, st.Statuses)
	}
	if st.Records != 4*st.Ops || st.Bytes != 40*st.Ops {
		t.Fatalf("records %d bytes %d for %d batches; want 4 and 40 per batch", st.Records, st.Bytes, st.Ops)
	}
	if frames["204"] != 4*st.Ops || frames["409"] != st.Ops || frames.Errors() != st.Ops {
		t.Fatalf("frame statuses %v for %d batches", frames, st.Ops)
	}
}

// chunked serves a 1,000-byte stream 300 bytes at a time with opaque offsets "c+N".
func chunked(w http.ResponseWriter, r *http.Request) {
	const size, chunk = 1000, 300
	off := r.URL.Query().Get("offset")
	pos := 0
	if off != "-1" {
		p, err := strconv.Atoi(strings.TrimPrefix(off, "c+"))
		if err != nil || !strings.HasPrefix(off, "c+") {
			http.Error(w, "bad offset "+off, 400)
			return
		}
		pos = p
	}
	end := min(pos+chunk, size)
	w.Header().Set("Stream-Next-Offset", fmt.Sprintf("c+%d", end))
	if end == size {
		w.Header().Set("Stream-Up-To-Date", "true")
	}
	w.Write([]byte(strings.Repeat("z", end-pos)))
}

func TestCatchUpReadFollowsNextOffsetUntilUpToDate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(chunked))
	defer srv.Close()
	var lat Histogram
	st := Statuses{}
	n, reqs, err := catchUpRead(context.Background(), srv.Client(), srv.URL+"/v1/stream/s", make([]byte, 100), &lat, st)
	if err != nil || n != 1000 || reqs != 4 || lat.Count() != 4 || st["200"] != 4 {
		t.Fatalf("read %d bytes in %d requests (%d timed), err %v, statuses %v", n, reqs, lat.Count(), err, st)
	}
}

func TestCatchUpReadStopsWithoutProgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Stream-Next-Offset", "c+0") // never up to date, never moves
	}))
	defer srv.Close()
	_, _, err := catchUpRead(context.Background(), srv.Client(), srv.URL+"/s", make([]byte, 100), &Histogram{}, Statuses{})
	if err == nil {
		t.Fatal("a server that never advances did not end the read")
	}
}

func TestTargetSurfacesAndBucketDetection(t *testing.T) {
	var paths []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.EscapedPath())
		if r.URL.Path == "/nobuckets" {
			w.WriteHeader(405)
			return
		}
		w.WriteHeader(201)
	})
	tg := testTarget(t, h, 1)
	if got := tg.StreamURL("a b"); !strings.HasSuffix(got, "/v1/stream/a%20b") {
		t.Fatalf("flat URL %s", got)
	}
	tg.Bucket = "mybucket"
	if err := tg.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.CreateStream(context.Background(), "s1", "text/plain"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths, ",") != "PUT /mybucket,PUT /mybucket/s1" {
		t.Fatalf("requests %q", paths)
	}
	tg.Bucket = "nobuckets"
	if err := tg.Prepare(context.Background()); !errors.Is(err, errUnsupported) {
		t.Fatalf("405 on PUT bucket: %v, want unsupported", err)
	}
}
