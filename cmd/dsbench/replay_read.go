package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// catchUpRead reads a whole stream by catch-up: GET ?offset=-1, then the returned
// Stream-Next-Offset, until a response says Stream-Up-To-Date: true (§5.6). Bodies are read
// into buf, over and over (its contents are discarded).
func catchUpRead(ctx context.Context, c *http.Client, u string, buf []byte, lat *Histogram, st Statuses) (int64, int, error) {
	offset := "-1"
	var total int64
	for reqs := 1; ; reqs++ {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"?offset="+url.QueryEscape(offset), nil)
		if err != nil {
			return total, reqs, err
		}
		resp, err := c.Do(req)
		if err != nil {
			st.Inc(0, err)
			return total, reqs, err
		}
		n, err := discardBody(resp, buf)
		if err == errNoDiscard {
			n, err = drain(resp.Body, buf)
		}
		resp.Body.Close()
		lat.Record(time.Since(t0))
		st.Inc(resp.StatusCode, err)
		if err != nil {
			return total, reqs, err
		}
		if resp.StatusCode != http.StatusOK {
			return total, reqs, fmt.Errorf("GET %s?offset=%s: HTTP %d", u, offset, resp.StatusCode)
		}
		total += n
		next := resp.Header.Get("Stream-Next-Offset")
		if resp.Header.Get("Stream-Up-To-Date") == "true" {
			return total, reqs, nil
		}
		if next == "" || (next == offset && n == 0) {
			return total, reqs, fmt.Errorf("GET %s?offset=%s: no progress (next %q, %d bytes) and not up to date", u, offset, next, n)
		}
		offset = next
	}
}

// replayReadBuf is a catch-up reader's body buffer: a read at least as large as the
// connection's 16 KiB bufio.Reader goes from the socket straight into it (one copy), and
// one read(2) takes whatever the socket holds up to this size. The buffers are allocated
// before the timed window.
const replayReadBuf = 128 << 10

// warmConn opens c's keep-alive connection before the timed window with one HEAD of the
// stream u, read to its end, as an HTTP client that reuses its connections would have it.
func warmConn(ctx context.Context, c *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HEAD %s: HTTP %d", u, resp.StatusCode)
	}
	return err
}

// drain reads r to its end into buf, over and over, and returns the bytes read.
func drain(r io.Reader, buf []byte) (int64, error) {
	var total int64
	for {
		n, err := r.Read(buf)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// bootstrapRead reads a whole stream with one GET {stream}/bootstrap; it returns the bytes of
// the update parts (the snapshot part counts too) and the number of parts.
func bootstrapRead(ctx context.Context, c *http.Client, u string, lat *Histogram, st Statuses) (int64, int, error) {
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/bootstrap", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		st.Inc(0, err)
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		st.Inc(resp.StatusCode, nil)
		io.Copy(io.Discard, resp.Body)
		return 0, 0, fmt.Errorf("GET %s/bootstrap: HTTP %d", u, resp.StatusCode)
	}
	s, err := readBootstrap(resp.Header.Get("Content-Type"), resp.Body)
	lat.Record(time.Since(t0))
	st.Inc(resp.StatusCode, err)
	if err != nil {
		return 0, 0, err
	}
	return s.SnapshotBytes + s.UpdateBytes, 1 + s.Updates, nil
}
