package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// serverAgg holds one server's RESULT lines for one case (one per round).
type serverAgg struct {
	runs        []map[string]string
	unsupported bool
}

// median returns the median over runs of a numeric key (mean of the middle two for an even
// count); ok is false when no run has it. Safe on a nil receiver.
func (s *serverAgg) median(key string) (float64, bool) {
	if s == nil {
		return 0, false
	}
	var vs []float64
	for _, r := range s.runs {
		if v, err := strconv.ParseFloat(r[key], 64); err == nil {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2], true
	}
	return (vs[n/2-1] + vs[n/2]) / 2, true
}

// count returns how many runs have a numeric value for key.
func (s *serverAgg) count(key string) int {
	n := 0
	if s != nil {
		for _, r := range s.runs {
			if _, err := strconv.ParseFloat(r[key], 64); err == nil {
				n++
			}
		}
	}
	return n
}

// sum returns the sum over runs of a numeric key.
func (s *serverAgg) sum(key string) float64 {
	var t float64
	if s != nil {
		for _, r := range s.runs {
			v, _ := strconv.ParseFloat(r[key], 64)
			t += v
		}
	}
	return t
}

// results maps case -> server -> aggregate; servers keeps the order servers first appeared.
type results struct {
	byCase  map[string]map[string]*serverAgg
	servers []string
}

// loadResults reads RESULT lines tagged case=... server=... from r.
func loadResults(r io.Reader, into *results) error {
	if into.byCase == nil {
		into.byCase = map[string]map[string]*serverAgg{}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m, ok := ParseResult(sc.Text())
		if !ok || m["case"] == "" || m["server"] == "" {
			continue
		}
		c, s := m["case"], m["server"]
		if into.byCase[c] == nil {
			into.byCase[c] = map[string]*serverAgg{}
		}
		agg := into.byCase[c][s]
		if agg == nil {
			agg = &serverAgg{}
			into.byCase[c][s] = agg
		}
		if !slices.Contains(into.servers, s) {
			into.servers = append(into.servers, s)
		}
		if m["unsupported"] == "1" {
			agg.unsupported = true
			continue
		}
		agg.runs = append(agg.runs, m)
	}
	return sc.Err()
}

// orderedServers puts node-durable, node and dsd first, then any other kind.
func (res *results) orderedServers() []string {
	var out []string
	for _, k := range []string{kindNodeDurable, kindNode, kindDSD, kindNoSync, kindCeiling} {
		if slices.Contains(res.servers, k) {
			out = append(out, k)
		}
	}
	for _, k := range res.servers {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// fmtNum renders a metric value: thousands separators for large numbers, 3 significant
// digits for small ones.
func fmtNum(v float64) string {
	switch {
	case v >= 1000:
		s := strconv.FormatInt(int64(v+0.5), 10)
		var b strings.Builder
		for i, ch := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(ch)
		}
		return b.String()
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// cell renders one server's result for a case: "median (p99 X ms)" plus run count and errors.
func cell(c benchCase, a *serverAgg) string {
	if a == nil {
		return "not run"
	}
	if a.unsupported {
		return "unsupported"
	}
	v, ok := a.median(c.Metric)
	s := "no data"
	if ok {
		s = fmtNum(v)
	}
	if ok && c.Metric != "p99_ms" {
		if p99, ok := a.median("p99_ms"); ok {
			s += fmt.Sprintf(" (p99 %s ms)", fmtNum(p99))
		}
	}
	var notes []string
	if subs, ok := a.median("subscribers"); ok {
		if conn, ok := a.median("connected"); ok && conn < subs {
			notes = append(notes, fmt.Sprintf("only %.0f of %.0f subscribers connected", conn, subs))
		}
	}
	if x, ok := a.median("batch_vs_single"); ok {
		single, _ := a.median("single_records_per_s")
		notes = append(notes, fmt.Sprintf("%.1fx the %s records/s of single POSTs", x, fmtNum(single)))
	}
	if x, ok := a.median("spread_ratio"); ok {
		list, _ := a.median("list_ratio")
		notes = append(notes, fmt.Sprintf("spread appends %.0f %% of 100-stream; listing p50 max/min %.2f", 100*x, list))
	}
	if rate, ok := a.median("rate"); ok {
		if got, ok := a.median("achieved_rate"); ok && got < 0.95*rate {
			notes = append(notes, fmt.Sprintf("writer reached only %s of %s appends/s", fmtNum(got), fmtNum(rate)))
		}
	}
	if srv, ok := a.median("server_cpu_us_per_req"); ok {
		notes = append(notes, fmt.Sprintf("server CPU %s us/req", fmtNum(srv)))
	}
	if srv, ok := a.median("server_cpu_us_per_delivery"); ok {
		cl, _ := a.median("client_cpu_us_per_delivery")
		notes = append(notes, fmt.Sprintf("CPU per delivery: server %s us, client %s us", fmtNum(srv), fmtNum(cl)))
	}
	if e := a.sum("errors"); e > 0 {
		notes = append(notes, fmt.Sprintf("%.0f errors", e))
	}
	for _, k := range []string{"lost", "dups", "incomplete", "failed"} {
		if v := a.sum(k); v > 0 {
			notes = append(notes, fmt.Sprintf("%.0f %s", v, k))
		}
	}
	if n := a.count(c.Metric); n > 0 && (n > 1 || len(a.runs) > 1) {
		notes = append(notes, fmt.Sprintf("median of %d", n))
		if n < len(a.runs) {
			notes[len(notes)-1] += fmt.Sprintf(" runs; %d had no value", len(a.runs)-n)
		}
	}
	if len(notes) > 0 {
		s += " [" + strings.Join(notes, ", ") + "]"
	}
	return s
}

// renderTable writes the peers table in markdown.
func renderTable(w io.Writer, res *results) {
	servers := res.orderedServers()
	fmt.Fprintf(w, "| Workload | Metric |")
	for _, s := range servers {
		fmt.Fprintf(w, " %s |", s)
	}
	fmt.Fprintf(w, " dsd / node-durable | Target (issue) | Met |\n|---|---|")
	for range servers {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|---|---|\n")
	for _, c := range benchCases {
		aggs := res.byCase[c.Name]
		if aggs == nil {
			continue
		}
		dir := "higher is better"
		if c.Lower {
			dir = "lower is better"
		}
		fmt.Fprintf(w, "| %s | %s %s (%s) |", c.Title, metricLabel(c.Metric), c.Unit, dir)
		for _, s := range servers {
			fmt.Fprintf(w, " %s |", cell(c, aggs[s]))
		}
		ratioCell := "-"
		if r, ok := ratio(aggs, c.Metric); ok {
			ratioCell = fmt.Sprintf("%.3gx", r)
		}
		met := "-"
		if c.Check != nil {
			switch r := c.Check(aggs); {
			case aggs[kindDSD] == nil || len(aggs[kindDSD].runs) == 0:
				met = "dsd not measured"
			case r.ok:
				met = "yes"
			default:
				met = "**no**: " + r.why
			}
		}
		target := c.Target
		if target == "" {
			target = "-"
		}
		fmt.Fprintf(w, " %s | %s | %s |\n", ratioCell, target, met)
	}
}

func metricLabel(key string) string {
	switch key {
	case "rps":
		return "throughput"
	case "records_per_s":
		return "throughput"
	case "p99_ms":
		return "p99"
	case "per_stream_b":
		return "RSS per stream"
	case "per_sub_kib":
		return "RSS per subscriber"
	case "ready_ms":
		return "time to first HEAD"
	}
	return key
}

// renderCeilingNote gives each append figure of dsd and dsd-nosync as a percentage of the
// ceiling-server's in the same run, with the server CPU per request of each (issue 19).
func renderCeilingNote(w io.Writer, res *results) {
	var lines []string
	for _, c := range benchCases {
		aggs := res.byCase[c.Name]
		ceil, ok := aggs[kindCeiling].median("rps")
		if !ok || ceil == 0 {
			continue
		}
		ccpu, _ := aggs[kindCeiling].median("server_cpu_us_per_req")
		line := fmt.Sprintf("- %s: ceiling %s req/s (server CPU %s us/req)", c.Name, fmtNum(ceil), fmtNum(ccpu))
		for _, k := range []string{kindDSD, kindNoSync} {
			if pct, ok := ceilingShare(aggs, k); ok {
				cpu, _ := aggs[k].median("server_cpu_us_per_req")
				line += fmt.Sprintf("; %s %.0f %% (%s us/req = %.2fx the ceiling's)", k, pct, fmtNum(cpu), cpu/max(ccpu, 1e-9))
			}
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Against the net/http ceiling** (`dsbench ceiling-server`: read the body, answer 204 with one header; "+
		"same generator, same run; server CPU = utime+stime of the server process from /proc per request):\n\n%s\n",
		strings.Join(lines, "\n"))
}

// renderWrkNote compares dsbench's and wrk's append-100 throughput and client CPU cost on
// each server.
func renderWrkNote(w io.Writer, res *results) {
	d, wr := res.byCase["append-100"], res.byCase["wrk-append-100"]
	if d == nil || wr == nil {
		return
	}
	fmt.Fprintf(w, "\n**dsbench vs wrk** on append-100 (medians; client CPU = the load generator's own user+sys time per request):\n\n")
	for _, s := range res.orderedServers() {
		a, ok1 := d[s].median("rps")
		b, ok2 := wr[s].median("rps")
		if !ok1 || !ok2 || b == 0 {
			continue
		}
		ca, _ := d[s].median("client_cpu_us_per_req")
		cb, _ := wr[s].median("client_cpu_us_per_req")
		fmt.Fprintf(w, "- %s: dsbench %s req/s, wrk %s req/s, dsbench/wrk = %.2f; client CPU %s us/req (dsbench) vs %s us/req (wrk)\n",
			s, fmtNum(a), fmtNum(b), a/b, fmtNum(ca), fmtNum(cb))
	}
	fmt.Fprintf(w, "\nBoth generators run on the server's cores. wrk-append.sh has the shape of the wrk benchmark the "+
		"project quotes (wrk -t2 -c50, a Lua request() per request rotating over the streams, 100-byte text/plain "+
		"bodies); dsbench runs 50 goroutines, each writing its requests and reading the answers on its own "+
		"keep-alive connection with net/http's request writer and response parser (no Transport goroutines); "+
		"DSBENCH_CPUPROFILE shows where its CPU goes. The "+
		"generator that spends less CPU per request leaves more to the server, so on a CPU-bound server it reads "+
		"higher; on the fsync-bound Node durable store both should agree. Compare dsbench's numbers with "+
		"wrk's only through this ratio.\n")
}

// machineInfo describes the machine the numbers come from.
func machineInfo() []KV {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	node := "not installed"
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		node = strings.TrimSpace(string(out))
	}
	goVersion := runtime.Version()
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		goVersion = strings.TrimSpace(string(out))
	}
	return []KV{
		{"date", time.Now().UTC().Format("2006-01-02 15:04 UTC")},
		{"nproc", strconv.Itoa(runtime.NumCPU())},
		{"CPU", cpu},
		{"kernel", strings.TrimSpace(string(kernel))},
		{"go", goVersion},
		{"node", node},
	}
}

func runReport(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "BENCHMARKS.md", "markdown file whose generated section ("+sectionBegin+" ... "+sectionEnd+") is replaced; created if missing")
	commands := fs.String("commands", "", "file whose text is shown as the exact commands that produced the results")
	settings := fs.String("settings", "", `one line describing the run's knobs (e.g. "BENCH_DUR=10s ROUNDS=3")`)
	fs.Usage = flagUsage(fs, "report", "Reads RESULT lines tagged case=... server=... round=... from the files given as\n"+
		"arguments, and writes per case each server's median over rounds, the dsd / Node durable\n"+
		"ratio and the issue's target into the generated section of --out.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("give one or more results files")
	}
	var res results
	for _, p := range fs.Args() {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = loadResults(f, &res)
		f.Close()
		if err != nil {
			return err
		}
	}
	if len(res.byCase) == 0 {
		return errors.New("no RESULT lines with case= and server= tags")
	}
	var cmds []byte
	if *commands != "" {
		var err error
		if cmds, err = os.ReadFile(*commands); err != nil {
			return err
		}
	}
	var b strings.Builder
	renderSection(&b, &res, machineInfo(), *settings, string(cmds))
	fmt.Print(b.String())
	return writeSection(*out, b.String())
}

// renderSection writes the whole generated section.
func renderSection(w io.Writer, res *results, machine []KV, settings, commands string) {
	fmt.Fprintf(w, "## Against the peers (generated by `make bench-peers`)\n\n")
	for _, kv := range machine {
		fmt.Fprintf(w, "- %s: %s\n", kv.Key, kv.Val)
	}
	if settings != "" {
		fmt.Fprintf(w, "- settings: %s\n", settings)
	}
	fmt.Fprintf(w, "\nServers: `node-durable` = Node reference server with its LMDB/file store "+
		"(fdatasync per append), `node` = the same in memory, `dsd` = this project. Each cell is the median over rounds; "+
		"the rounds alternate servers (node-durable, node, dsd, node-durable, ...) so that machine noise hits all of them. "+
		"Client and server share the machine's cores.\n\n")
	renderTable(w, res)
	fmt.Fprintf(w, "\nMethod notes: every case of every round runs on a fresh server (tools/with-server.sh), because "+
		"the Node durable store slows down sharply once more than 100 streams have been written (its file-handle "+
		"pool holds 100), and under that churn it answers some appends 404 after writing their bytes. For the same "+
		"reason the replay streams are created with one PUT each carrying the whole 200 KiB, one request at a time. "+
		"Timeouts (fan-out: 20 s to connect, 10 s per append; idle SSE: 45 s to connect) keep a server that "+
		"collapses from stalling the run; the cell then says how many subscribers connected and what rate the "+
		"writer reached. Fan-out appends are paced open-loop (up to 8 in flight), so events may land out of order; "+
		"only loss and duplication count against a server.\n")
	renderCeilingNote(w, res)
	renderWrkNote(w, res)
	if commands != "" {
		fmt.Fprintf(w, "\nCommands (as run):\n\n```\n%s\n```\n", strings.TrimRight(commands, "\n"))
	}
}
