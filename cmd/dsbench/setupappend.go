package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// setupAppender appends setup data (replay and fill workloads) as an idempotent producer
// (§5.2.1; one producer per stream, epoch 0, seq = message number) and retries a failed
// append with the same seq, so that a server which recorded the first try deduplicates the
// retry (204) instead of storing the message twice. It cannot help a server that writes the
// bytes without recording the append: the Node reference's durable store does that when it
// answers 404 under file-handle churn (more than 100 streams written at once), so setups
// against it run one request at a time. One appender serves one stream, sequentially.
type setupAppender struct {
	t       *Target
	url     string
	ctype   string
	id      string // Producer-Id
	seq     int64  // next Producer-Seq
	Retries int    // appends retried after an error answer
}

func newSetupAppender(t *Target, name, ctype string) *setupAppender {
	return &setupAppender{t: t, url: t.StreamURL(name), ctype: ctype, id: "setup-" + name}
}

// Append appends body and returns the new tail (Stream-Next-Offset).
func (a *setupAppender) Append(ctx context.Context, body []byte) (string, error) {
	const attempts = 5
	var lastErr error
	for try := range attempts {
		if try > 0 {
			a.Retries++
			time.Sleep(time.Duration(try) * 20 * time.Millisecond)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", a.ctype)
		req.Header.Set("Producer-Id", a.id)
		req.Header.Set("Producer-Epoch", "0")
		req.Header.Set("Producer-Seq", strconv.FormatInt(a.seq, 10))
		resp, err := a.t.Client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			a.seq++
			return resp.Header.Get("Stream-Next-Offset"), nil
		}
		lastErr = fmt.Errorf("HTTP %d %s", resp.StatusCode, trimBody(b))
	}
	return "", fmt.Errorf("append to %s: %d attempts, last: %w", a.url, attempts, lastErr)
}
