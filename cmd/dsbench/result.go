package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is the machine-readable outcome of one workload run, printed as one line:
// `RESULT workload=NAME key=value ...`. Keys keep the order in which they were set.
// Conventions: latencies are `*_ms` (milliseconds, 3 decimals), rates are `*_per_s` or `rps`,
// sizes are bytes unless the key says otherwise (`*_kib`).
type Result struct {
	keys []string
	vals map[string]string
}

// NewResult starts a result for the named workload, followed by the caller's tags
// (`--tags "server=node round=1"`).
func NewResult(workload string, tags []KV) *Result {
	r := &Result{vals: map[string]string{}}
	r.Set("workload", workload)
	for _, t := range tags {
		r.Set(t.Key, t.Val)
	}
	return r
}

// Set records key=value; a float64 gets 3 decimals, a time.Duration is written in ms.
// Setting a key again replaces its value and keeps its position.
func (r *Result) Set(key string, v any) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'f', 3, 64)
	case time.Duration:
		s = strconv.FormatFloat(ms(x), 'f', 3, 64)
	case bool:
		s = "0"
		if x {
			s = "1"
		}
	default:
		s = fmt.Sprint(x)
	}
	if _, ok := r.vals[key]; !ok {
		r.keys = append(r.keys, key)
	}
	r.vals[key] = s
}

// Get returns the value of key ("" when unset).
func (r *Result) Get(key string) string { return r.vals[key] }

// SetLatency records p50, p90, p99 and max of h under prefix (e.g. "" -> p50_ms). An empty
// histogram sets nothing: "no sample" must not read as "0 ms" to whoever takes medians.
func (r *Result) SetLatency(prefix string, h *Histogram) {
	if h.Count() == 0 {
		return
	}
	r.Set(prefix+"p50_ms", h.Quantile(0.50))
	r.Set(prefix+"p90_ms", h.Quantile(0.90))
	r.Set(prefix+"p99_ms", h.Quantile(0.99))
	r.Set(prefix+"max_ms", h.Max())
}

// SetStatuses records errors= (every non-2xx status and transport error) and one
// status_CODE=N key per such status, in ascending order.
func (r *Result) SetStatuses(prefix string, s Statuses) {
	r.Set(prefix+"errors", s.Errors())
	for _, k := range s.errorKeys() {
		r.Set(prefix+"status_"+k, s[k])
	}
}

// String renders the RESULT line (no trailing newline). Values never contain spaces:
// any space in a tag value is replaced by '_'.
func (r *Result) String() string {
	var b strings.Builder
	b.WriteString("RESULT")
	for _, k := range r.keys {
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strings.ReplaceAll(r.vals[k], " ", "_"))
	}
	return b.String()
}

// ParseResult parses a line printed by Result.String (anything before "RESULT" is ignored).
// ok is false when the line holds no RESULT.
func ParseResult(line string) (map[string]string, bool) {
	i := strings.Index(line, "RESULT ")
	if i < 0 {
		return nil, false
	}
	out := map[string]string{}
	for _, f := range strings.Fields(line[i+len("RESULT "):]) {
		k, v, found := strings.Cut(f, "=")
		if found {
			out[k] = v
		}
	}
	return out, out["workload"] != ""
}

// KV is one key=value tag.
type KV struct{ Key, Val string }

// parseTags parses "k=v k2=v2" (space- or comma-separated).
func parseTags(s string) ([]KV, error) {
	var out []KV
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("tag %q: want key=value", f)
		}
		out = append(out, KV{k, v})
	}
	return out, nil
}

// Statuses counts outcomes by HTTP status code ("204", "409", ...) or "neterr" for transport
// errors (refused, reset, timeout). Merge per-goroutine counts with Add.
type Statuses map[string]int64

// Inc counts one response with the given status; status 0 (or err != nil) counts as "neterr".
func (s Statuses) Inc(status int, err error) {
	if err != nil || status == 0 {
		s["neterr"]++
		return
	}
	s[strconv.Itoa(status)]++
}

// Add adds o's counts to s.
func (s Statuses) Add(o Statuses) {
	for k, v := range o {
		s[k] += v
	}
}

// Errors is the number of non-2xx responses plus transport errors.
func (s Statuses) Errors() int64 {
	var n int64
	for _, k := range s.errorKeys() {
		n += s[k]
	}
	return n
}

func (s Statuses) errorKeys() []string {
	var ks []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if !strings.HasPrefix(k, "2") {
			ks = append(ks, k)
		}
	}
	return ks
}

// String renders "204:1000 409:3 neterr:1" (every status, ascending).
func (s Statuses) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, s[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// printLatency writes "label: n=.. p50=..ms p90=..ms p99=..ms max=..ms" to w.
func printLatency(w io.Writer, label string, h *Histogram) {
	fmt.Fprintf(w, "%s: n=%d p50=%.3fms p90=%.3fms p99=%.3fms max=%.3fms mean=%.3fms\n", label, h.Count(),
		ms(h.Quantile(0.5)), ms(h.Quantile(0.9)), ms(h.Quantile(0.99)), ms(h.Max()), ms(h.Mean()))
}
