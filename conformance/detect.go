package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"
	"time"
)

// prepare readies the surface and the extension list before the specs run: on the
// bucketed surface it creates the kit's bucket (or checks Config.Bucket), and with
// Config.Extensions nil it probes the server for each extension.
func (rt *runtime) prepare(ctx context.Context) error {
	c := &client{http: rt.http, tr: &Transcript{}}
	if rt.cfg.Surface == SurfaceBucketed {
		if err := rt.prepareBucket(ctx, c); err != nil {
			return err
		}
	}
	if rt.cfg.Extensions != nil {
		rt.extensions = append([]string(nil), rt.cfg.Extensions...)
	} else {
		rt.extensions = rt.detect(ctx, c)
	}
	// Bucket specs need the bucketed surface, and the bucketed surface means buckets.
	if rt.cfg.Surface == SurfaceBucketed && !contains(rt.extensions, "buckets") {
		rt.extensions = append(rt.extensions, "buckets")
	}
	if rt.cfg.Surface == SurfaceFlat && contains(rt.extensions, "buckets") {
		rt.extensions = remove(rt.extensions, "buckets")
	}
	return nil
}

func (rt *runtime) prepareBucket(ctx context.Context, c *client) error {
	if rt.cfg.Bucket != "" {
		rt.bucket = rt.cfg.Bucket
		r, err := rt.probe(ctx, c, "GET", rt.bucketURL(rt.bucket))
		if err != nil {
			return err
		}
		if r.StatusCode != 200 {
			return fmt.Errorf("conformance: bucket %q: GET %s answered %d, want 200", rt.bucket, rt.bucketURL(rt.bucket), r.StatusCode)
		}
		return nil
	}
	rt.bucket = "dsc-" + rt.runID
	r, err := rt.probe(ctx, c, "PUT", rt.bucketURL(rt.bucket))
	if err != nil {
		return err
	}
	if r.StatusCode != 201 {
		return fmt.Errorf("conformance: bucketed surface: PUT %s answered %d, want 201 (does the server support buckets?)", rt.bucketURL(rt.bucket), r.StatusCode)
	}
	rt.createdBucket = true
	// A server without buckets may have created a stream at /{bucket}: only a bucket
	// describes itself (extension §1.3).
	g, err := rt.probe(ctx, c, "GET", rt.bucketURL(rt.bucket))
	if err != nil {
		return err
	}
	var meta struct {
		BucketID string `json:"bucket_id"`
	}
	if g.StatusCode != 200 || json.Unmarshal(g.Data, &meta) != nil || meta.BucketID != rt.bucket {
		rt.deleteQuietly(ctx, c, rt.bucketURL(rt.bucket))
		rt.createdBucket = false
		return fmt.Errorf("conformance: bucketed surface: GET %s answered %d %q, not a bucket description (the server does not support buckets)", rt.bucketURL(rt.bucket), g.StatusCode, excerpt(g.Data, 100))
	}
	return nil
}

// finish deletes the kit's own bucket (best-effort) and reports a leftover.
func (rt *runtime) finish(ctx context.Context) string {
	if !rt.createdBucket {
		return ""
	}
	c := &client{http: rt.http, tr: &Transcript{}}
	r, err := rt.probe(ctx, c, "DELETE", rt.bucketURL(rt.bucket))
	if err != nil {
		return fmt.Sprintf("cleanup: DELETE bucket %s: %v", rt.bucket, err)
	}
	if r.StatusCode != 204 {
		return fmt.Sprintf("cleanup: DELETE bucket %s answered %d (streams left behind?)", rt.bucket, r.StatusCode)
	}
	return ""
}

func (rt *runtime) probe(ctx context.Context, c *client, method, u string, opts ...Opt) (*Response, error) {
	req, spec, err := build(ctx, method, u, opts)
	if err != nil {
		return nil, err
	}
	r, err := c.do(req, spec)
	if err != nil {
		return nil, fmt.Errorf("conformance: %s %s: %w", method, u, err)
	}
	return r, nil
}

// detect probes for each extension with throw-away streams on the configured surface:
//
//	buckets                     the bucketed surface (never probed on flat)
//	json-record-coordinates-v1  Stream-Extensions on a JSON stream's PUT or HEAD
//	fork                        PUT with Stream-Forked-From answers 201 and inherits data
//	snapshot                    PUT {s}/snapshot/{tail} answers 204
//	bootstrap                   GET {s}/bootstrap answers 200 multipart/mixed
//	attrs                       GET {s}/attrs answers 200 application/json
//	append-batch                POST {s}/append-batch answers 200 with a JSON array
//
//	subscriptions               GET {root}__ds/jwks.json answers 200 application/jwk-set+json
func (rt *runtime) detect(ctx context.Context, c *client) []string {
	var exts []string
	var cleanup []string
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			rt.deleteQuietly(ctx, c, cleanup[i])
		}
	}()
	name := func(slug string) string {
		return fmt.Sprintf("%s%s-probe-%d-%s", rt.cfg.NamePrefix, rt.runID, rt.nextSerial(), slug)
	}
	do := func(method, u string, opts ...Opt) *Response {
		r, err := rt.probe(ctx, c, method, u, opts...)
		if err != nil {
			return &Response{}
		}
		return r
	}
	created := func(r *Response, u string) bool {
		if r.Response != nil && r.StatusCode == 201 {
			cleanup = append(cleanup, u)
			return true
		}
		return false
	}

	// The subscription APIs: their key set (base protocol §6.5).
	ds := rt.cfg.BaseURL + rt.cfg.StreamPath + "__ds/jwks.json"
	if rt.cfg.Surface == SurfaceBucketed {
		ds = rt.cfg.BaseURL + "/" + rt.bucket + "/__ds/jwks.json"
	}
	if r := do("GET", ds); r.Response != nil && r.StatusCode == 200 && mediaType(r.Get(hContentType)) == "application/jwk-set+json" {
		exts = append(exts, "subscriptions")
	}

	// A JSON stream: record coordinates.
	ju := rt.streamURL(name("json"))
	r := do("PUT", ju, CT(ctJSON), Text(`[{"probe":1}]`))
	if created(r, ju) {
		if hasToken(r.Header.Values(hExtensions), "json-record-coordinates-v1") ||
			hasToken(do("HEAD", ju).headerValues(hExtensions), "json-record-coordinates-v1") {
			exts = append(exts, "json-record-coordinates-v1")
		}
	}

	// A text stream for the sub-resource probes.
	textName := name("text")
	tu := rt.streamURL(textName)
	r = do("PUT", tu, CT(ctText), Text("ab"))
	if !created(r, tu) {
		return exts
	}
	tail := r.Get(hNextOffset)
	tx := rt.extURL(textName) // the stream's sub-resources (D1 amended)

	fu := rt.streamURL(name("fork"))
	src, _ := url.Parse(tu)
	if r := do("PUT", fu, H("Stream-Forked-From", src.EscapedPath())); created(r, fu) {
		if g := do("GET", fu, Q("offset", offsetStart)); g.Response != nil && g.StatusCode == 200 && g.Text() == "ab" {
			exts = append(exts, "fork")
		}
	}

	if tail != "" {
		su := tx + "/snapshot/" + url.PathEscape(tail)
		r := do("PUT", su, CT(ctOctets), Text("snap"))
		if r.Response != nil && r.StatusCode == 204 {
			exts = append(exts, "snapshot")
		} else {
			created(r, su)
		}
	}

	if r := do("GET", tx+"/bootstrap"); r.Response != nil && r.StatusCode == 200 && mediaType(r.Get(hContentType)) == "multipart/mixed" {
		exts = append(exts, "bootstrap")
	}

	if r := do("GET", tx+"/attrs"); r.Response != nil && r.StatusCode == 200 && mediaType(r.Get(hContentType)) == ctJSON {
		exts = append(exts, "attrs")
	}

	var frame bytes.Buffer
	_ = binary.Write(&frame, binary.BigEndian, uint32(1))
	frame.WriteByte('c')
	bu := tx + "/append-batch"
	r = do("POST", bu, CT(ctText), Body(frame.Bytes()))
	var acks []json.RawMessage
	if r.Response != nil && r.StatusCode == 200 && json.Unmarshal(r.Data, &acks) == nil && len(acks) == 1 {
		exts = append(exts, "append-batch")
	} else {
		created(r, bu)
	}
	return exts
}

// headerValues is Header.Values that tolerates an empty Response.
func (r *Response) headerValues(name string) []string {
	if r.Response == nil {
		return nil
	}
	return r.Header.Values(name)
}

// hasToken reports whether a comma-separated header list holds token (case-insensitive).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// mediaType is the lowercased media type of a Content-Type value ("" if unparsable).
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	return mt
}

func remove(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// DetectExtensions probes the server of cfg for the extensions a run with Extensions nil
// would enable (see detect; "buckets" on the bucketed surface), without running any
// spec. On the bucketed surface it uses cfg.Bucket, which must exist, or creates and
// deletes a bucket of its own. Other tools (cmd/dslincheck) use it to match the kit's
// --extensions auto.
func DetectExtensions(ctx context.Context, cfg Config) ([]string, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Extensions = nil
	rt := newRuntime(cfg)
	if err := rt.prepare(ctx); err != nil {
		return nil, err
	}
	if msg := rt.finish(ctx); msg != "" {
		return rt.extensions, errors.New("conformance: " + msg)
	}
	return rt.extensions, nil
}

// ParseExtensions reads an --extensions value as the kit does: "auto" is nil (probe),
// "none" or "" an empty list, else comma-separated known extension ids.
func ParseExtensions(s string) ([]string, error) { return parseExtensions(s) }

// measureLongPoll measures the server's long-poll timeout once: how long a long-poll at
// the tail of a fresh stream waits before its 204 (B-5.7), rounded up to 100 ms.
func (rt *runtime) measureLongPoll(ctx context.Context) (time.Duration, error) {
	c := &client{http: rt.http, tr: &Transcript{}}
	u := rt.streamURL(fmt.Sprintf("%s%s-probe-%d-long-poll", rt.cfg.NamePrefix, rt.runID, rt.nextSerial()))
	r, err := rt.probe(ctx, c, "PUT", u, CT(ctText))
	if err != nil {
		return 0, err
	}
	if r.StatusCode != 201 {
		return 0, fmt.Errorf("PUT %s answered %d, want 201", u, r.StatusCode)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rt.deleteQuietly(ctx, c, u)
	}()
	start := time.Now()
	r, err = rt.probe(ctx, c, "GET", u, Q("offset", r.Get(hNextOffset)), Q("live", "long-poll"))
	if err != nil {
		return 0, err
	}
	if r.StatusCode != 204 {
		return 0, fmt.Errorf("a long-poll at the tail answered %d, want 204 when it times out", r.StatusCode)
	}
	step := 100 * time.Millisecond
	return (time.Since(start) + step - 1).Truncate(step), nil
}
