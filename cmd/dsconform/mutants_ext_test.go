package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// extMutantExtensions are enabled for the extension mutants' runs, with dsd's profile.
const extMutantExtensions = "snapshot,bootstrap,append-batch,attrs,subscriptions,json-record-coordinates-v1"

// extMutants each break one requirement of the snapshot, bootstrap, append-batch,
// attributes or record-coordinates extension (extension §2-§6), of subscriptions (base
// §6-§7), or one of dsd's profile (docs/DESIGN.md), of the real server behind the proxy.
var extMutants = []mutant{
	{name: "stale acks and releases are accepted", breaks: "B-7-06", filter: "B-7-06", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.status != http.StatusConflict || !strings.Contains(string(x.respBody), `"FENCED"`) {
				return
			}
			switch {
			case strings.HasSuffix(x.in.URL.Path, "/ack"):
				x.status, x.respBody = http.StatusOK, []byte(`{"ok":true,"next_wake":false}`)
			case strings.HasSuffix(x.in.URL.Path, "/release"):
				x.status, x.respBody = http.StatusNoContent, nil
			}
		},
	}},
	{name: "a second claim takes the lease too", breaks: "B-7-05", filter: "B-7-05", m: mutation{
		response: func(p *proxy, x *exchange) {
			if strings.HasSuffix(x.in.URL.Path, "/claim") && strings.Contains(string(x.respBody), `"ALREADY_CLAIMED"`) {
				x.status, x.respBody = http.StatusOK, []byte(`{"wake_id":"w_0","generation":1,"token":"t","streams":[]}`)
			}
		},
	}},
	{name: "kids are not derived from the key", breaks: "B-6-08", filter: "B-6-08", m: mutation{
		response: func(p *proxy, x *exchange) {
			if strings.HasSuffix(x.in.URL.Path, "/jwks.json") {
				x.respBody = []byte(strings.ReplaceAll(string(x.respBody), `"kid":"ds_`, `"kid":"ds_0`))
			}
		},
	}},
	{name: "bootstrap without its first part", breaks: "X-3.2-05", filter: "X-3.2-05", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.in.Method != http.MethodGet || x.status != http.StatusOK || !strings.HasSuffix(x.in.URL.Path, "/bootstrap") {
				return
			}
			_, params, err := mime.ParseMediaType(x.header.Get("Content-Type"))
			if err != nil || params["boundary"] == "" {
				return
			}
			delim := []byte("\r\n--" + params["boundary"])
			if i := bytes.Index(x.respBody, delim); i >= 0 {
				x.respBody = x.respBody[i+2:]
			}
		},
	}},
	{name: "append-batch acks all carry the last offset", breaks: "X-4.4-02", filter: "X-4.4-02", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.status != http.StatusOK || !strings.HasSuffix(x.in.URL.Path, "/append-batch") {
				return
			}
			var acks []map[string]any
			if json.Unmarshal(x.respBody, &acks) != nil || len(acks) < 2 {
				return
			}
			last := acks[len(acks)-1]["stream_next_offset"]
			for _, a := range acks {
				a["stream_next_offset"] = last
			}
			x.respBody, _ = json.Marshal(acks)
		},
	}},
	{name: "attributes keep unknown fields", breaks: "X-5.1-03", filter: "X-5.1-03", m: mutation{
		// The proxy answers GET attrs with the last document PUT there, verbatim.
		response: func(p *proxy, x *exchange) {
			if !strings.HasSuffix(x.in.URL.Path, "/attrs") {
				return
			}
			switch {
			case x.in.Method == http.MethodPut && x.status == http.StatusNoContent:
				p.remember(x.in.URL.Path, string(x.reqBody))
			case x.in.Method == http.MethodGet && x.status == http.StatusOK && p.recall(x.in.URL.Path) != "":
				x.respBody = []byte(p.recall(x.in.URL.Path))
			}
		},
	}},
	{name: "no Stream-Extensions on sub-resources", breaks: "X-6-02", filter: "X-6-02", m: mutation{
		response: func(p *proxy, x *exchange) {
			for _, sub := range []string{"/snapshot", "/retention", "/bootstrap", "/attrs", "/append-batch"} {
				if strings.Contains(x.in.URL.Path, sub) {
					x.header.Del("Stream-Extensions")
				}
			}
		},
	}},
	{name: "binary SSE batches a read's messages into one data event", breaks: "B-5.8-10", filter: "B-5.8-10 && sec:5.8", m: mutation{
		// The proxy holds base64 data events and the control events between them, and sends
		// one data event of all their bytes before the up-to-date control event.
		response: func(p *proxy, x *exchange) {
			if x.sse && x.header.Get("Stream-SSE-Data-Encoding") != "" {
				x.note = "batch:"
			}
		},
		sseEvent: func(x *exchange, lines []string) []string {
			if !strings.HasPrefix(x.note, "batch:") {
				return lines
			}
			if lines[0] == "event: data" {
				for _, l := range lines[1:] {
					raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(l, "data:"))
					x.note += string(raw)
				}
				return nil
			}
			pending := strings.TrimPrefix(x.note, "batch:")
			if pending == "" || !strings.Contains(strings.Join(lines, ""), `"upToDate":true`) {
				if pending != "" {
					return nil
				}
				return lines
			}
			x.note = "batch:"
			return append([]string{"event: data", "data:" + base64.StdEncoding.EncodeToString([]byte(pending)), ""}, lines...)
		},
	}},
	{name: "snapshot reads ignore If-None-Match", breaks: "X-2.5-01", filter: "X-2.5-01", m: mutation{
		request: func(p *proxy, x *exchange) {
			if strings.Contains(x.in.URL.Path, "/snapshot/") {
				x.out.Header.Del("If-None-Match")
			}
		},
	}},
	{name: "offset=-1 after retention reads from the retained start", breaks: "X-2.2-10", filter: "X-2.2-10", m: mutation{
		// A server that serves -1 from the retained start: the proxy answers a 410 to a
		// catch-up from -1 with the read from the offset the 410 names.
		response: func(p *proxy, x *exchange) {
			start := x.header.Get("Stream-Next-Offset")
			if x.in.Method != http.MethodGet || x.status != http.StatusGone || x.query("offset") != "-1" || x.query("live") != "" || start == "" {
				return
			}
			q := x.in.URL.Query()
			q.Set("offset", start)
			resp, err := p.send(x.in, http.MethodGet, x.in.URL.Path+"?"+q.Encode(), x.in.Header, nil)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			x.respBody, _ = io.ReadAll(resp.Body)
			x.status, x.header = resp.StatusCode, resp.Header.Clone()
		},
	}},
	{name: "HEAD names the first snapshot ever published", breaks: "X-2.4-04", filter: "X-2.4-04", m: mutation{
		response: func(p *proxy, x *exchange) {
			path := strings.SplitN(x.in.URL.Path, "/snapshot/", 2)
			switch {
			case x.in.Method == http.MethodPut && x.status == http.StatusNoContent && len(path) == 2 && p.recall(streamName(path[0])) == "":
				p.remember(streamName(path[0]), x.in.URL.Path[len(path[0])+len("/snapshot/"):])
			case x.in.Method == http.MethodHead && x.header.Get("Stream-Snapshot-Offset") != "" && p.recall(streamName(x.in.URL.Path)) != "":
				x.header.Set("Stream-Snapshot-Offset", p.recall(streamName(x.in.URL.Path)))
			}
		},
	}},
}

// streamName is the name in a flat stream path or a compat-bucket path (the kit reaches a
// flat stream's sub-resources as /default/{name}/..., DESIGN D1 amended).
func streamName(path string) string {
	if n, ok := strings.CutPrefix(path, "/v1/stream/"); ok {
		return n
	}
	return strings.TrimPrefix(path, "/default/")
}

// TestMutantsExtensions is TestMutants for the extensions dsd implements and its profile:
// each mutant's run must fail with a newly failing spec labelled with the broken requirement.
func TestMutantsExtensions(t *testing.T) {
	skipUnlessMutants(t)
	base := upstream(t)
	var filters []string
	for _, m := range extMutants {
		filters = append(filters, "("+m.filter+")")
	}
	identity := httptest.NewServer(newProxy(base, mutation{}))
	defer identity.Close()
	baseline := runKit(t, identity.URL, strings.Join(filters, " || "), "--extensions", extMutantExtensions, "--profiles", "dsd")
	if baseline.err != "" {
		t.Fatal(baseline.err)
	}
	if len(baseline.failing) > 0 {
		t.Logf("specs failing without any mutation (ignored below): %v", keys(baseline.failing))
	}

	runs := make([]kitRun, len(extMutants))
	var wg sync.WaitGroup
	for i, m := range extMutants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := httptest.NewServer(newProxy(base, m.m))
			defer srv.Close()
			runs[i] = runKit(t, srv.URL, m.filter, "--extensions", extMutantExtensions, "--profiles", "dsd")
		}()
	}
	wg.Wait()

	for i, m := range extMutants {
		run := runs[i]
		t.Run(m.name, func(t *testing.T) {
			if run.err != "" {
				t.Fatal(run.err)
			}
			if run.exitCode == 0 {
				t.Fatalf("the kit passed a server that breaks %s\n%s", m.breaks, tail(run.output, 40))
			}
			var caught []string
			for name, labels := range run.failing {
				if _, before := baseline.failing[name]; before {
					continue
				}
				for _, l := range labels {
					if l == m.breaks {
						caught = append(caught, name)
					}
				}
			}
			if len(caught) == 0 {
				t.Fatalf("no newly failing spec names %s; failing: %v\n%s", m.breaks, keys(run.failing), tail(run.output, 40))
			}
			sort.Strings(caught)
			t.Logf("caught by %d spec(s), e.g. %q", len(caught), caught[0])
		})
	}
}
