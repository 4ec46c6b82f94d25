package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sent is one append as a client saw it: its body, and the Stream-Next-Offset of its
// acknowledgement ("" when the request never got an answer).
type sent struct {
	body  string
	acked string
}

// crashLoad drives concurrent appends (plain, idempotent-producer, JSON batches) and one
// append-and-close, recording every request.
type crashLoad struct {
	base   string
	mu     sync.Mutex
	sent   map[string][]sent // stream -> appends in send order per writer
	prodOK map[string][2]int // producer stream -> last acknowledged (epoch, seq)
	closed bool
}

func (l *crashLoad) record(stream string, s sent) {
	l.mu.Lock()
	l.sent[stream] = append(l.sent[stream], s)
	l.mu.Unlock()
}

func do(method, u, ct string, body []byte, hdr map[string]string) (*http.Response, error) {
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	return cl.Do(req)
}

// Everything acknowledged survives SIGKILL at any moment; nothing unacknowledged is half
// visible; closure and producer state survive. Spec: D4, B-4-01, B-4-04, B-5.2.1-07.
func TestSIGKILLLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills dsd processes; skipped with -short")
	}
	dataDir := t.TempDir()
	p := startDSD(t, dataDir)
	l := &crashLoad{base: p.url + "/v1/stream/", sent: map[string][]sent{}, prodOK: map[string][2]int{}}
	streams := map[string]string{"plain": "text/plain", "prod": "text/plain", "json": "application/json", "closing": "text/plain"}
	for s, ct := range streams {
		resp, err := do("PUT", l.base+s, ct, nil, nil)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("create %s: %v %v", s, resp, err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			l.writer(w, stop)
		}(w)
	}
	wg.Add(1)
	go func() { defer wg.Done(); l.closer(stop) }()
	time.Sleep(time.Duration(600+rand.IntN(600)) * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	close(stop)
	wg.Wait()

	p2 := startDSD(t, dataDir)
	l.base = p2.url + "/v1/stream/"
	total := 0
	for s := range streams {
		total += l.verify(t, s, streams[s])
	}
	if total < 50 {
		t.Fatalf("only %d acknowledged appends before the kill: load too light to mean anything", total)
	}
	l.verifyProducers(t)
	l.verifyClosure(t)
	t.Logf("verified %d acknowledged appends across a SIGKILL", total)
}

// writer appends unique fixed-size bodies until stop; odd writers use producer headers on
// "prod", writer 0 sends JSON batches.
func (l *crashLoad) writer(w int, stop chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		var stream, ct, body string
		hdr := map[string]string{}
		switch {
		case w == 0:
			stream, ct = "json", "application/json"
			body = fmt.Sprintf(`[{"w":%d,"i":%d,"k":0},{"w":%d,"i":%d,"k":1}]`, w, i, w, i)
		case w%2 == 1:
			stream, ct = "prod", "text/plain"
			body = fmt.Sprintf("p%02d-%08d;", w, i)
			hdr = map[string]string{"Producer-Id": fmt.Sprintf("w%d", w), "Producer-Epoch": "0", "Producer-Seq": fmt.Sprint(i)}
		default:
			stream, ct = "plain", "text/plain"
			body = fmt.Sprintf("w%02d-%08d;", w, i)
		}
		resp, err := do("POST", l.base+stream, ct, []byte(body), hdr)
		if err != nil {
			l.record(stream, sent{body: body})
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			l.record(stream, sent{body: body})
			return
		}
		l.record(stream, sent{body: body, acked: resp.Header.Get("Stream-Next-Offset")})
		if len(hdr) > 0 {
			l.mu.Lock()
			l.prodOK[hdr["Producer-Id"]] = [2]int{0, i}
			l.mu.Unlock()
		}
	}
}

// closer appends to "closing" for a while, then appends-and-closes it.
func (l *crashLoad) closer(stop chan struct{}) {
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf("c-%08d;", i)
		hdr := map[string]string{}
		if i == 19 {
			hdr["Stream-Closed"] = "true"
		}
		resp, err := do("POST", l.base+"closing", "text/plain", []byte(body), hdr)
		if err != nil {
			l.record("closing", sent{body: body})
			return
		}
		resp.Body.Close()
		l.record("closing", sent{body: body, acked: resp.Header.Get("Stream-Next-Offset")})
		if i == 19 && resp.StatusCode == 204 {
			l.mu.Lock()
			l.closed = true
			l.mu.Unlock()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readAll reads a stream from the start by following Stream-Next-Offset.
func readAll(t *testing.T, u string) (data []byte, closed bool) {
	t.Helper()
	off := "-1"
	for {
		resp, err := do("GET", u+"?offset="+url.QueryEscape(off), "", nil, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("read %s at %s: %v %v", u, off, resp, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		data = append(data, b...)
		off = resp.Header.Get("Stream-Next-Offset")
		if resp.Header.Get("Stream-Up-To-Date") == "true" {
			return data, resp.Header.Get("Stream-Closed") == "true"
		}
	}
}

// verify checks one stream after the restart and returns its acknowledged appends.
func (l *crashLoad) verify(t *testing.T, stream, ct string) int {
	data, _ := readAll(t, l.base+stream)
	var stored []string // the stream's messages, as canonical pieces
	if ct == "application/json" {
		var msgs []json.RawMessage
		if err := json.Unmarshal(data, &msgs); err != nil {
			t.Fatalf("%s: %v", stream, err)
		}
		for i := 0; i+1 < len(msgs); i += 2 {
			stored = append(stored, "["+string(msgs[i])+","+string(msgs[i+1])+"]")
		}
		if len(msgs)%2 != 0 {
			t.Fatalf("%s: a JSON batch is half visible (%d messages)", stream, len(msgs))
		}
	} else {
		for _, piece := range strings.SplitAfter(string(data), ";") {
			if piece != "" {
				stored = append(stored, piece)
			}
		}
	}
	known := map[string]sent{}
	for _, s := range l.sent[stream] {
		known[s.body] = s
	}
	seen := map[string]bool{}
	end := 0
	for _, piece := range stored {
		s, ok := known[piece]
		if !ok {
			t.Fatalf("%s: stored message %q was never sent (torn or corrupt)", stream, piece)
		}
		if seen[piece] {
			t.Fatalf("%s: message %q stored twice", stream, piece)
		}
		seen[piece] = true
		end += len(canonical(piece, ct))
		if s.acked != "" && s.acked != fmt.Sprintf("0000000000000000_%016d", end) {
			t.Fatalf("%s: %q acknowledged at %s but stored ending at %d", stream, piece, s.acked, end)
		}
	}
	acked := 0
	for _, s := range l.sent[stream] {
		if s.acked != "" {
			acked++
			if !seen[s.body] {
				t.Fatalf("%s: acknowledged append %q (at %s) lost", stream, s.body, s.acked)
			}
		}
	}
	return acked
}

// canonical is a message's stored form: the bytes, or compact JSON lines (D3).
func canonical(piece, ct string) string {
	if ct != "application/json" {
		return piece
	}
	var msgs []json.RawMessage
	json.Unmarshal([]byte(piece), &msgs)
	out := ""
	for _, m := range msgs {
		out += string(m) + "\n"
	}
	return out
}

// verifyProducers: each producer's last acknowledged seq is still known after the
// restart, so its retry is deduplicated (204) rather than appended or refused.
func (l *crashLoad) verifyProducers(t *testing.T) {
	for id, es := range l.prodOK {
		hdr := map[string]string{"Producer-Id": id, "Producer-Epoch": "0", "Producer-Seq": fmt.Sprint(es[1])}
		resp, err := do("POST", l.base+"prod", "text/plain", []byte("retry;"), hdr)
		if err != nil || resp.StatusCode != 204 {
			t.Fatalf("producer %s retry of seq %d after restart: %v %v", id, es[1], resp, err)
		}
	}
}

// verifyClosure: an acknowledged close survives.
func (l *crashLoad) verifyClosure(t *testing.T) {
	if !l.closed {
		return
	}
	_, closed := readAll(t, l.base+"closing")
	if !closed {
		t.Fatal("acknowledged close lost")
	}
	resp, err := do("POST", l.base+"closing", "text/plain", []byte("late;"), nil)
	if err != nil || resp.StatusCode != 409 {
		t.Fatalf("append after acknowledged close: %v %v", resp, err)
	}
}
