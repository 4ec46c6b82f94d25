package main

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
)

// bootstrapSummary describes one /bootstrap response (extension §3.2): the first MIME part
// is the snapshot (empty, application/octet-stream, when there is none), every later part
// is one retained update message.
type bootstrapSummary struct {
	SnapshotType  string // Content-Type of the first part
	SnapshotBytes int64  // size of the first part's body
	Updates       int    // parts after the first
	UpdateBytes   int64  // total size of those parts' bodies
	UpdateTypes   map[string]int
}

// readBootstrap parses a multipart/mixed bootstrap body given the response's Content-Type.
// Part bodies are counted, not kept. Parts are read raw: no Content-Transfer-Encoding
// decoding (the extension forbids reframing payloads).
func readBootstrap(contentType string, body io.Reader) (bootstrapSummary, error) {
	var s bootstrapSummary
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return s, fmt.Errorf("bootstrap Content-Type %q: %w", contentType, err)
	}
	if mt != "multipart/mixed" || params["boundary"] == "" {
		return s, fmt.Errorf("bootstrap Content-Type %q: want multipart/mixed with a boundary", contentType)
	}
	mr := multipart.NewReader(body, params["boundary"])
	for i := 0; ; i++ {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			if i == 0 {
				return s, errors.New("bootstrap: no parts (the snapshot part is mandatory, even empty)")
			}
			return s, nil
		}
		if err != nil {
			return s, fmt.Errorf("bootstrap part %d: %w", i, err)
		}
		n, err := io.Copy(io.Discard, p)
		if err != nil {
			return s, fmt.Errorf("bootstrap part %d: %w", i, err)
		}
		ct := p.Header.Get("Content-Type")
		if i == 0 {
			s.SnapshotType, s.SnapshotBytes = ct, n
			continue
		}
		if s.UpdateTypes == nil {
			s.UpdateTypes = map[string]int{}
		}
		s.UpdateTypes[ct]++
		s.Updates++
		s.UpdateBytes += n
	}
}
