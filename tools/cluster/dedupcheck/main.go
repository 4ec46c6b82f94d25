// Command dedupcheck checks idempotent producers across failover: each writer appends
// seq 0, 1, 2, ... with its own producer (Producer-Id, Producer-Epoch 0, Producer-Seq) to
// its own stream, resending every append whose outcome it did not learn (no answer, 5xx)
// with the same headers until it is acknowledged. Afterwards each stream must hold every
// body exactly once, in order (dedup held: no resend applied twice; nothing acknowledged
// lost), and each acknowledged append (up to about 500 per stream, evenly spread) must be
// readable at the offset it was acknowledged after, with its bytes.
//
//	dedupcheck --base-url http://127.0.0.1:PORT --writers 4 --duration 60s
//
// Exits 1 on any violation; prints one summary line.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

type writer struct {
	base, stream, producer string
	hc                     *http.Client
	bodies                 [][]byte
	pending                []byte   // the last append, when its outcome stayed unknown
	starts                 []string // the offset each acknowledged append was written at
	resends                int
}

func main() {
	base := flag.String("base-url", "", "server (or round-robin proxy) base URL")
	writers := flag.Int("writers", 4, "concurrent producers, one stream each")
	dur := flag.Duration("duration", time.Minute, "how long to append")
	stopFile := flag.String("stop-file", "", "stop appending once this file exists")
	flag.Parse()
	if *base == "" {
		fmt.Fprintln(os.Stderr, "dedupcheck: --base-url is required")
		os.Exit(2)
	}
	prefix := fmt.Sprintf("dedup-%d", time.Now().UnixNano())
	hc := &http.Client{Timeout: 30 * time.Second}
	ws := make([]*writer, *writers)
	var wg sync.WaitGroup
	end := time.Now().Add(*dur)
	for i := range ws {
		w := &writer{base: *base, stream: fmt.Sprintf("%s-%d", prefix, i), producer: fmt.Sprintf("p%d", i), hc: hc}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(end, *stopFile)
		}()
	}
	wg.Wait()
	bad, acked, resends := 0, 0, 0
	for _, w := range ws {
		acked += len(w.bodies)
		resends += w.resends
		for _, err := range w.verify() {
			bad++
			fmt.Println("dedupcheck: VIOLATION:", err)
		}
	}
	fmt.Printf("dedupcheck: %d writers, %d acknowledged producer appends (%d resent after an unknown outcome), %d violations\n",
		len(ws), acked, resends, bad)
	if bad > 0 || acked == 0 {
		os.Exit(1)
	}
}

func (w *writer) url() string { return w.base + "/v1/stream/" + w.stream }

// send does one request, retrying what has no definite answer until deadline.
func (w *writer) send(method, u string, body []byte, hdr map[string]string, deadline time.Time) (*http.Response, []byte, error) {
	for try := 0; ; try++ {
		req, _ := http.NewRequestWithContext(context.Background(), method, u, bytes.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := w.hc.Do(req)
		var b []byte
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil && resp.StatusCode < 500 {
			return resp, b, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil, nil, fmt.Errorf("%s %s: no answer before the deadline: %w", method, u, err)
		}
		if method == http.MethodPost {
			w.resends++
		}
		if try%20 == 19 {
			fmt.Printf("dedupcheck: %s %s: still no answer after %d tries: %v %v\n", method, u, try+1, err, status(resp))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (w *writer) run(end time.Time, stopFile string) {
	ct := map[string]string{"Content-Type": "application/octet-stream"}
	resp, _, err := w.send(http.MethodPut, w.url(), nil, ct, end.Add(time.Minute))
	if err != nil || resp.StatusCode != 201 && resp.StatusCode != 200 {
		fmt.Println("dedupcheck: create:", w.stream, err)
		return
	}
	next := resp.Header.Get("Stream-Next-Offset")
	for seq := 0; time.Now().Before(end); seq++ {
		if stopFile != "" {
			if _, err := os.Stat(stopFile); err == nil {
				return
			}
		}
		body := []byte(fmt.Sprintf("[%s:%d]", w.producer, seq))
		hdr := map[string]string{"Content-Type": "application/octet-stream", "Producer-Id": w.producer,
			"Producer-Epoch": "0", "Producer-Seq": strconv.Itoa(seq)}
		resp, _, err := w.send(http.MethodPost, w.url(), body, hdr, time.Now().Add(2*time.Minute))
		if err != nil {
			fmt.Println("dedupcheck:", err)
			w.pending = body // its outcome stays unknown: applied once or not at all
			return
		}
		if resp.StatusCode != 200 && resp.StatusCode != 204 {
			fmt.Printf("dedupcheck: %s seq %d: status %d\n", w.stream, seq, resp.StatusCode)
			return
		}
		w.bodies = append(w.bodies, body)
		w.starts = append(w.starts, next)
		next = resp.Header.Get("Stream-Next-Offset")
		time.Sleep(10 * time.Millisecond) // leave the machine to the other checks
	}
}

// verify reads the stream and each acknowledged append at its offset.
func (w *writer) verify() []error {
	var errs []error
	got, err := w.readAll("-1")
	if err != nil {
		return []error{err}
	}
	want := bytes.Join(w.bodies, nil)
	if !bytes.Equal(got, want) && !bytes.Equal(got, append(want, w.pending...)) {
		errs = append(errs, fmt.Errorf("%s: content is not the acknowledged appends once each in order (%d bytes, want %d)", w.stream, len(got), len(want)))
	}
	step := max(1, len(w.starts)/500) // at most about 500 reads per stream
	for i := 0; i < len(w.starts); i += step {
		off := w.starts[i]
		resp, b, err := w.send(http.MethodGet, w.url()+"?offset="+off, nil, nil, time.Now().Add(time.Minute))
		if err != nil {
			return append(errs, err)
		}
		if resp.StatusCode != 200 {
			errs = append(errs, fmt.Errorf("%s: read at %s: status %d", w.stream, off, resp.StatusCode))
			continue
		}
		if !bytes.HasPrefix(b, w.bodies[i]) {
			errs = append(errs, fmt.Errorf("%s: the append acknowledged after %s is not readable there (%.40q)", w.stream, off, b))
		}
	}
	return errs
}

// readAll reads from offset to the tail by catch-up.
func (w *writer) readAll(offset string) ([]byte, error) {
	var out []byte
	for range 10000 {
		resp, b, err := w.send(http.MethodGet, w.url()+"?offset="+offset, nil, nil, time.Now().Add(time.Minute))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: read at %s: status %d", w.stream, offset, resp.StatusCode)
		}
		out = append(out, b...)
		next := resp.Header.Get("Stream-Next-Offset")
		if resp.Header.Get("Stream-Up-To-Date") != "" || next == offset {
			return out, nil
		}
		offset = next
	}
	return out, nil
}

func status(resp *http.Response) string {
	if resp == nil {
		return "no response"
	}
	return resp.Status
}
