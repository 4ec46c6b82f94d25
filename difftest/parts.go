package difftest

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
)

// PartObs is one part of a /bootstrap response (extension §3.2).
type PartObs struct {
	ContentType string
	Body        string
}

func (p PartObs) String() string { return fmt.Sprintf("{%s %q}", p.ContentType, clip(p.Body)) }

// diffParts compares bootstrap parts one by one: each is compared whole (§3.2: every
// part is exactly one message, byte for byte).
func diffParts(want, got []PartObs) []string {
	if len(want) != len(got) {
		return []string{fmt.Sprintf("%d parts %v, want %d %v", len(got), got, len(want), want)}
	}
	var out []string
	for i := range want {
		if want[i] != got[i] {
			out = append(out, fmt.Sprintf("part %d %s, want %s", i, got[i], want[i]))
		}
	}
	return out
}

// partsFromHTTP parses a multipart/mixed /bootstrap body (RFC 2046) with mime/multipart
// and checks that its boundary occurs in no part (D5). It returns the media type of the
// response's Content-Type and the parts.
func partsFromHTTP(contentType string, body []byte) (string, []PartObs, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", nil, err
	}
	boundary := params["boundary"]
	if boundary == "" {
		return mt, nil, fmt.Errorf("no boundary in %q", contentType)
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var parts []PartObs
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return mt, parts, nil
		}
		if err != nil {
			return mt, parts, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return mt, parts, err
		}
		if bytes.Contains(b, []byte(boundary)) {
			return mt, parts, fmt.Errorf("part %d holds the boundary %q", len(parts), boundary)
		}
		parts = append(parts, PartObs{ContentType: p.Header.Get("Content-Type"), Body: string(b)})
	}
}
