package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsd-project/dsd/conformance"
	"github.com/onsi/ginkgo/v2/types"
)

// mutant is a server that is conforming except for one broken requirement.
type mutant struct {
	name string
	// breaks is the requirement id the kit must report among the newly failing specs.
	breaks string
	// filter selects the specs to run (kept small so the test stays fast).
	filter string
	m      mutation
}

const jsonArrayMin = 2

// mutants each break one requirement of the real server behind the proxy.
var mutants = []mutant{
	{name: "drop Stream-Up-To-Date", breaks: "B-5.6-05", filter: "B-5.6-05", m: mutation{
		response: func(p *proxy, x *exchange) { x.header.Del("Stream-Up-To-Date") },
	}},
	{name: "Stream-Next-Offset goes backwards", breaks: "B-8-11", filter: "B-8-11", m: mutation{
		response: func(p *proxy, x *exchange) {
			path, next := x.in.URL.Path, x.header.Get("Stream-Next-Offset")
			switch {
			case x.in.Method == http.MethodPut && x.status == http.StatusCreated:
				p.remember(path, next)
			case x.in.Method == http.MethodPost && x.status < 300 && p.recall(path) != "":
				x.header.Set("Stream-Next-Offset", p.recall(path))
			}
		},
	}},
	{name: "ETag ignores closure", breaks: "B-10-03", filter: "B-10-03", m: mutation{
		// The proxy owns the ETag: a hash of the URL and body only, so closing (which
		// changes no byte) keeps it, and it answers If-None-Match itself.
		request: func(p *proxy, x *exchange) {
			x.note = x.out.Header.Get("If-None-Match")
			x.out.Header.Del("If-None-Match")
		},
		response: func(p *proxy, x *exchange) {
			if x.in.Method != http.MethodGet || x.status != http.StatusOK || x.sse || x.query("offset") == "now" {
				return
			}
			sum := sha256.Sum256([]byte(x.in.URL.RequestURI() + "\x00" + string(x.respBody)))
			tag := `"m-` + hex.EncodeToString(sum[:8]) + `"`
			x.header.Set("ETag", tag)
			if x.note == tag {
				x.status, x.respBody = http.StatusNotModified, nil
			}
		},
	}},
	{name: "a JSON read drops a message", breaks: "B-9.1-02", filter: "sec:9", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.in.Method != http.MethodGet || x.status != http.StatusOK || x.sse || !strings.HasPrefix(x.header.Get("Content-Type"), "application/json") {
				return
			}
			var msgs []json.RawMessage
			if json.Unmarshal(x.respBody, &msgs) == nil && len(msgs) >= jsonArrayMin {
				x.respBody, _ = json.Marshal(msgs[:len(msgs)-1])
			}
		},
	}},
	{name: "SSE without control events", breaks: "B-5.8-05", filter: "B-5.8-05", m: mutation{
		sseEvent: func(x *exchange, lines []string) []string {
			if lines[0] == "event: control" {
				return nil
			}
			return lines
		},
	}},
	{name: "a producer duplicate is stored twice", breaks: "B-5.2.1-05", filter: "B-5.2.1-05", m: mutation{
		// On a deduplicated producer append, the proxy re-sends the body without the
		// producer headers, as a server that forgot the dedup would store it.
		response: func(p *proxy, x *exchange) {
			if x.in.Method != http.MethodPost || x.status != http.StatusNoContent || x.in.Header.Get("Producer-Id") == "" || len(x.reqBody) == 0 {
				return
			}
			h := x.in.Header.Clone()
			for _, k := range []string{"Producer-Id", "Producer-Epoch", "Producer-Seq", "Stream-Seq", "Stream-Closed"} {
				h.Del(k)
			}
			if resp, err := p.send(x.in, http.MethodPost, x.in.URL.RequestURI(), h, x.reqBody); err == nil {
				resp.Body.Close()
			}
		},
	}},
	{name: "Content-Type echo gains a charset", breaks: "B-5.1-13", filter: "B-5.1-13", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.header.Get("Content-Type") == "text/plain" {
				x.header.Set("Content-Type", "text/plain; charset=utf-8")
			}
		},
	}},
	{name: "no Stream-Closed at EOF", breaks: "B-5.6-06", filter: "B-5.6-06", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.in.Method == http.MethodGet && x.query("live") == "" {
				x.header.Del("Stream-Closed")
			}
		},
	}},
	{name: "cursor does not increase", breaks: "B-10-07", filter: "B-10-07 && sec:5.7", m: mutation{
		response: func(p *proxy, x *exchange) {
			if c := x.query("cursor"); c != "" && x.query("live") == "long-poll" {
				x.header.Set("Stream-Cursor", c)
			}
		},
	}},
	{name: "200 instead of 409 on a closed append", breaks: "B-5.2-07", filter: "B-5.2-07", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.in.Method == http.MethodPost && x.status == http.StatusConflict && x.header.Get("Stream-Closed") == "true" {
				x.status, x.respBody = http.StatusOK, nil
			}
		},
	}},
	{name: "base64 SSE not encoded", breaks: "B-5.8-02", filter: "B-5.8-02", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.sse && x.header.Get("Stream-SSE-Data-Encoding") != "" {
				x.header.Del("Stream-SSE-Data-Encoding")
				x.note = "decode"
			}
		},
		sseEvent: func(x *exchange, lines []string) []string {
			if x.note != "decode" || lines[0] != "event: data" {
				return lines
			}
			var b64 strings.Builder
			for _, l := range lines[1:] {
				b64.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " "))
			}
			raw, err := base64.StdEncoding.DecodeString(b64.String())
			if err != nil {
				return lines
			}
			return []string{"event: data", "data:" + strings.NewReplacer("\n", "", "\r", "").Replace(string(raw))}
		},
	}},
	{name: "missing nosniff", breaks: "B-12.7-01", filter: "B-12.7-01", m: mutation{
		response: func(p *proxy, x *exchange) { x.header.Del("X-Content-Type-Options") },
	}},
	{name: "long-poll answers without waiting", breaks: "B-5.7-02", filter: "B-5.7-02 && sec:5.7", m: mutation{
		request: func(p *proxy, x *exchange) {
			if x.query("live") != "long-poll" {
				return
			}
			q := x.in.URL.Query()
			q.Del("live")
			x.out.URL.RawQuery = q.Encode()
			x.note = "lp"
		},
		response: func(p *proxy, x *exchange) {
			if x.note == "lp" && x.status == http.StatusOK && (len(x.respBody) == 0 || string(x.respBody) == "[]") {
				x.status, x.respBody = http.StatusNoContent, nil
			}
		},
	}},
	{name: "Stream-Seq ignored", breaks: "B-5.2-05", filter: "B-5.2-05", m: mutation{
		request: func(p *proxy, x *exchange) { x.out.Header.Del("Stream-Seq") },
	}},
	{name: "offset=now serves history", breaks: "B-8-04", filter: "B-8-04", m: mutation{
		request: func(p *proxy, x *exchange) {
			if x.query("offset") == "now" && x.query("live") == "" {
				q := x.in.URL.Query()
				q.Set("offset", "-1")
				x.out.URL.RawQuery = q.Encode()
			}
		},
	}},
	{name: "close-only with a foreign tuple on a closed stream is 204", breaks: "B-5.2.1-09", filter: "B-5.2.1-09", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.in.Method == http.MethodPost && len(x.reqBody) == 0 && x.in.Header.Get("Producer-Id") != "" &&
				x.status == http.StatusConflict && x.header.Get("Stream-Closed") == "true" {
				x.status, x.respBody = http.StatusNoContent, nil
			}
		},
	}},
	{name: "HEAD hides closure", breaks: "B-5.5-02", filter: "B-5.5-02", m: mutation{
		response: func(p *proxy, x *exchange) {
			if x.in.Method == http.MethodHead {
				x.header.Del("Stream-Closed")
			}
		},
	}},
}

// kitRun is the outcome of one dsconform run.
type kitRun struct {
	exitCode int
	failing  map[string][]string // failing spec full name -> its labels
	output   string
	err      string // the run could not be judged (no report, could not start)
}

// runKit runs dsconform against base with a label filter (extensions none, unless extra
// flags say otherwise) and returns its outcome. It is safe to call from several
// goroutines (problems land in kitRun.err).
func runKit(t *testing.T, base, filter string, extra ...string) kitRun {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--base-url", base, "--surface", "flat", "--compat-bucket", "default", "--extensions", "none",
		"--label-filter", filter, "--report-dir", dir, "--long-poll-timeout", "500ms", "--spec-timeout", "15s"}
	cmd := dsconformCmd(ctx, append(args, extra...)...)
	out, err := cmd.CombinedOutput()
	run := kitRun{output: string(out), failing: map[string][]string{}}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		run.exitCode = exit.ExitCode()
	default:
		run.err = fmt.Sprintf("dsconform: %v\n%s", err, out)
		return run
	}
	rep, err := conformance.LoadReport(filepath.Join(dir, conformance.ReportFile))
	if err != nil {
		run.err = fmt.Sprintf("no report (exit %d): %v\n%s", run.exitCode, err, out)
		return run
	}
	for _, s := range rep.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && s.State.Is(types.SpecStateFailureStates) {
			run.failing[s.FullText()] = s.Labels()
		}
	}
	return run
}

// TestMutants checks that the kit catches broken servers: for each mutant, a proxy in
// front of a real server breaks one requirement, and the kit must fail with a newly
// failing spec labelled with that requirement. Specs failing without the mutation (a
// reference server's own deviations) do not count.
func TestMutants(t *testing.T) {
	skipUnlessMutants(t)
	base := upstream(t)

	var filters []string
	for _, m := range mutants {
		filters = append(filters, "("+m.filter+")")
	}
	identity := httptest.NewServer(newProxy(base, mutation{}))
	defer identity.Close()
	baseline := runKit(t, identity.URL, strings.Join(filters, " || "))
	if baseline.err != "" {
		t.Fatal(baseline.err)
	}
	if len(baseline.failing) > 0 {
		t.Logf("specs failing without any mutation (ignored below): %v", keys(baseline.failing))
	}

	// The runs mostly wait on the server (long-poll timeouts, SSE budgets), so they run
	// concurrently, more than GOMAXPROCS at a time; the subtests then judge each outcome.
	runs := make([]kitRun, len(mutants))
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i, m := range mutants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			srv := httptest.NewServer(newProxy(base, m.m))
			defer srv.Close()
			runs[i] = runKit(t, srv.URL, m.filter)
		}()
	}
	wg.Wait()

	for i, m := range mutants {
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

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
