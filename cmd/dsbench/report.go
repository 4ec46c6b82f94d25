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

// values returns the numeric values of key over runs, in run order. Safe on a nil receiver.
func (s *serverAgg) values(key string) []float64 {
	if s == nil {
		return nil
	}
	var vs []float64
	for _, r := range s.runs {
		if v, err := strconv.ParseFloat(r[key], 64); err == nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// median returns the median over runs of a numeric key (mean of the middle two for an even
// count); ok is false when no run has it. Safe on a nil receiver.
func (s *serverAgg) median(key string) (float64, bool) {
	vs := s.values(key)
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

// extreme returns the smallest (min) or largest value of key over runs: the worst round of
// a figure that must hold in every round.
func (s *serverAgg) extreme(key string, min bool) (float64, bool) {
	vs := s.values(key)
	if len(vs) == 0 {
		return 0, false
	}
	if min {
		return slices.Min(vs), true
	}
	return slices.Max(vs), true
}

// count returns how many runs have a numeric value for key.
func (s *serverAgg) count(key string) int { return len(s.values(key)) }

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

// results maps case -> server -> aggregate; servers and cases keep the order in which
// they first appeared.
type results struct {
	byCase  map[string]map[string]*serverAgg
	servers []string
	cases   []string
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
			into.cases = append(into.cases, c)
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

// fmtInt renders a count with thousands separators.
func fmtInt(v float64) string {
	if v >= 1000 {
		return fmtNum(v)
	}
	return strconv.FormatInt(int64(v+0.5), 10)
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
	for _, k := range []struct{ key, unit string }{{"server_cpu_us_per_req", "us/req"},
		{"server_cpu_us_per_record", "us/record"}, {"server_cpu_us_per_mb", "us/MB"}} {
		if srv, ok := a.median(k.key); ok {
			notes = append(notes, fmt.Sprintf("server CPU %s %s", fmtNum(srv), k.unit))
		}
	}
	if cl, ok := a.median("client_cpu_us_per_mb"); ok {
		notes = append(notes, fmt.Sprintf("client CPU %s us/MB", fmtNum(cl)))
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

// tableServers is orderedServers restricted to the kinds with a result in a peers case
// (the Go benchmarks' server=dsd rows are not a column of their own).
func (res *results) tableServers() []string {
	var out []string
	for _, k := range res.orderedServers() {
		for _, c := range benchCases {
			if res.byCase[c.Name][k] != nil {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// renderTable writes the peers table in markdown: per case, each server's median and the
// issue 19 targets judged on it in the targets table.
func renderTable(w io.Writer, res *results) {
	servers := res.tableServers()
	fmt.Fprintf(w, "| Workload | Metric |")
	for _, s := range servers {
		fmt.Fprintf(w, " %s |", s)
	}
	fmt.Fprintf(w, " dsd / node-durable | Issue 19 targets |\n|---|---|")
	for range servers {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|---|\n")
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
		fmt.Fprintf(w, " %s | %s |\n", ratioCell, targetsOf(c.Name))
	}
}

// renderTargets writes the targets table: one row per condition of issue 19, the figures it
// is judged on (medians over rounds, server CPU per operation beside each throughput) and
// whether it is met.
func renderTargets(w io.Writer, j *judge) {
	fmt.Fprintf(w, "| # | Target (issue 19) | Workload | Measured (medians over rounds) | Met |\n|---|---|---|---|---|\n")
	for _, t := range targetRows {
		v := t.Judge(j)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.Num, t.Goal, t.Workload, v.measured, v.metCell())
	}
}

func metricLabel(key string) string {
	switch key {
	case "rps":
		return "throughput"
	case "records_per_s", "mb_per_s":
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

// kvValue returns the value of key in kvs ("" when absent).
func kvValue(kvs []KV, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Val
		}
	}
	return ""
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
	baseline := fs.String("baseline", "", "RESULT lines of the figures issue 19's target 7 must not regress from (tools/bench/baseline.txt); none = those rows are not measured")
	fs.Usage = flagUsage(fs, "report", "Reads RESULT lines tagged case=... server=... round=... from the files given as\n"+
		"arguments, and writes into the generated section of --out issue 19's targets, each judged on\n"+
		"the medians over rounds, and per case each server's median and the dsd / Node durable ratio.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("give one or more results files")
	}
	var res, base results
	if err := loadFiles(&res, fs.Args()...); err != nil {
		return err
	}
	if len(res.byCase) == 0 {
		return errors.New("no RESULT lines with case= and server= tags")
	}
	if *baseline != "" {
		if err := loadFiles(&base, *baseline); err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
	}
	var cmds []byte
	if *commands != "" {
		var err error
		if cmds, err = os.ReadFile(*commands); err != nil {
			return err
		}
	}
	var b strings.Builder
	renderSection(&b, &res, &base, machineInfo(), *settings, string(cmds))
	fmt.Print(b.String())
	return writeSection(*out, b.String())
}

// loadFiles reads the RESULT lines of each file into res.
func loadFiles(res *results, paths ...string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = loadResults(f, res)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// renderSection writes the whole generated section; base holds target 7's baseline figures.
func renderSection(w io.Writer, res, base *results, machine []KV, settings, commands string) {
	fmt.Fprintf(w, "## Against the peers (generated by `make bench-peers`)\n\n")
	for _, kv := range machine {
		fmt.Fprintf(w, "- %s: %s\n", kv.Key, kv.Val)
	}
	if settings != "" {
		fmt.Fprintf(w, "- settings: %s\n", settings)
	}
	fmt.Fprintf(w, "\nServers: `node-durable` = Node reference server with its LMDB/file store "+
		"(fdatasync per append), `node` = the same in memory, `dsd` = this project, `dsd-nosync` = dsd with "+
		"`--unsafe-no-sync` (its CPU cost without fsync), `ceiling` = `dsbench ceiling-server`, the bare net/http handler "+
		"(read the body, answer 204 with one header) that bounds what a Go server can do per request here. Each figure is "+
		"the median over rounds; the rounds alternate servers (node-durable, node, dsd, dsd-nosync, ceiling, node-durable, ...) "+
		"so that machine noise hits all of them. Client and server share the machine's cores. Server CPU = utime+stime of "+
		"the server process from /proc over the workload, per operation.\n\n")
	fmt.Fprintf(w, "### Issue 19's targets\n\n")
	renderTargets(w, &judge{res: res, base: base, cpu: kvValue(machine, "CPU")})
	fmt.Fprintf(w, "\nHow the rows judge. Targets 1 and 2 hold on both generators (dsbench and wrk, each against "+
		"the ceiling it drove itself). \"The Node reference\" of targets 3 and 5 is the better of node-durable and node "+
		"(the stricter reading); a Node kind that ran and produced no figure counts as worse than any dsd figure. "+
		"Loss counts in every round (a sum, not a median). The write(2) floor is httpd's BenchmarkLoopbackWriteFloor "+
		"run in the same rounds (tools/bench/gobench.sh). A run in another shape than a target is stated for "+
		"(FANOUT_SUBS, IDLE_SUBS, REPLAY_CLIENTS, STARTUP_STREAMS below the issue's) shows its figures but is "+
		"**not measured** for that target. Target 7 compares with the figures BENCHMARKS.md carried before the "+
		"issue's work (tools/bench/baseline.txt, each row names its source); within %.0f %% of the baseline counts "+
		"as no regression. Where the baseline was taken on another CPU model the row says so: the comparison then "+
		"mixes machines.\n\n### All servers\n\n", 100*regressionTolerance)
	renderTable(w, res)
	fmt.Fprintf(w, "\nMethod notes: every case of every round runs on a fresh server (tools/with-server.sh), because "+
		"the Node durable store slows down sharply once more than 100 streams have been written (its file-handle "+
		"pool holds 100), and under that churn it answers some appends 404 after writing their bytes. For the same "+
		"reason the replay streams are created with one PUT each carrying the whole 200 KiB, one request at a time. "+
		"Timeouts (fan-out: 20 s to connect, 10 s per append; idle SSE: 45 s to connect) keep a server that "+
		"collapses from stalling the run; the cell then says how many subscribers connected and what rate the "+
		"writer reached. Fan-out appends are paced open-loop (up to 8 in flight), so events may land out of order; "+
		"only loss and duplication count against a server.\n")
	renderWrkNote(w, res)
	if commands != "" {
		fmt.Fprintf(w, "\nCommands (as run):\n\n```\n%s\n```\n", strings.TrimRight(commands, "\n"))
	}
}
