package conformance

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Surface names how stream URLs are built (DESIGN D1).
type Surface string

const (
	// SurfaceFlat puts streams at {base}{StreamPath}{name}.
	SurfaceFlat Surface = "flat"
	// SurfaceBucketed puts streams at {base}/{bucket}/{name} (extension §1).
	SurfaceBucketed Surface = "bucketed"
)

// Mode is a named preset of the label filter (Sonobuoy's modes).
type Mode string

const (
	// ModeSmoke runs the one smoke spec: create, append, read.
	ModeSmoke Mode = "smoke"
	// ModeCore runs every base-protocol MUST: req:must && ext: isEmpty.
	ModeCore Mode = "core"
	// ModeFull runs everything within the enabled extensions and profiles.
	ModeFull Mode = "full"
)

// modeFilters maps each mode to its label filter (before the extension and profile terms).
var modeFilters = map[Mode]string{
	ModeSmoke: "smoke",
	ModeCore:  "req:must && ext: isEmpty",
	ModeFull:  "",
}

// Config says which server to test and how. Zero values take the defaults of
// RegisterFlags. The kit reads it only while specs run (flags are parsed after the spec
// tree is declared).
type Config struct {
	// BaseURL is the server root, e.g. http://127.0.0.1:4437 (no trailing slash needed).
	BaseURL string
	// Surface selects flat or bucketed stream URLs. Default flat.
	Surface Surface
	// StreamPath is the flat surface's stream prefix. Default "/v1/stream/".
	StreamPath string
	// CompatBucket is the bucket behind the flat surface (dsd's --compat-bucket). On the
	// flat surface, extension sub-resources (/snapshot, /retention, /bootstrap, /attrs,
	// /append-batch) are addressed as {base}/{CompatBucket}/{name}/... (DESIGN D1 amended:
	// the flat surface has none of its own). Empty: {stream URL}/... as before the
	// amendment.
	CompatBucket string
	// Bucket is an existing bucket to use on the bucketed surface. Empty: the kit creates
	// one (PUT {base}/{bucket}) and deletes it after the run.
	Bucket string
	// NamePrefix starts every stream name the kit makes. Default "dsc".
	NamePrefix string
	// HTTPClient sends every request. Default: a client with its own transport.
	HTTPClient *http.Client
	// LongPollTimeout is the server's long-poll timeout. Default 500ms. Specs that wait
	// for a long-poll 204 allow this plus slack; specs that must not wait compare with it.
	LongPollTimeout time.Duration
	// MeasureLongPoll makes the run measure the server's long-poll timeout once before
	// the specs (a long-poll at a fresh stream's tail, up to 2 min) and use it as
	// LongPollTimeout (--long-poll-timeout auto).
	MeasureLongPoll bool
	// SpecTimeout bounds each spec. Default 20s.
	SpecTimeout time.Duration
	// Extensions lists the enabled extensions (ext:<id> values). Nil: auto-detect by
	// probing the server (see detect.go).
	Extensions []string
	// Profiles lists the enabled server profiles (profile:<id> values, e.g. "dsd").
	Profiles []string
	// Mode is smoke, core or full. Default full.
	Mode Mode
	// LabelFilter is ANDed with the mode, extension and profile filter.
	LabelFilter string
	// FocusStrings restricts the run to specs whose full text matches one of these
	// regular expressions.
	FocusStrings []string
	// ReportDir, when set, receives junit.xml and report.json.
	ReportDir string
	// Out, when set, receives the failing specs' transcripts and the final tally line
	// "N passed, N failed, N skipped" after the run.
	Out io.Writer
	// Verbose makes Ginkgo's console reporter verbose.
	Verbose bool
	// RandomSeed orders the specs (they are always randomized). Zero: time-based.
	RandomSeed int64
}

// RegisterFlags binds cfg's fields to flags on fs. It never touches flag.CommandLine
// unless fs is flag.CommandLine.
func RegisterFlags(fs *flag.FlagSet, cfg *Config) {
	fs.StringVar(&cfg.BaseURL, "base-url", cfg.BaseURL, "server root URL, e.g. http://127.0.0.1:4437 (required)")
	fs.Func("surface", "stream URL layout: flat ({base}{stream-path}{name}) or bucketed ({base}/{bucket}/{name}) (default flat)", func(s string) error {
		switch Surface(s) {
		case SurfaceFlat, SurfaceBucketed:
			cfg.Surface = Surface(s)
			return nil
		}
		return fmt.Errorf("surface must be flat or bucketed, not %q", s)
	})
	fs.StringVar(&cfg.StreamPath, "stream-path", cfg.StreamPath, "flat surface stream prefix (default /v1/stream/)")
	fs.StringVar(&cfg.CompatBucket, "compat-bucket", cfg.CompatBucket, "flat surface: the bucket behind it, where extension sub-resources live (dsd: default)")
	fs.StringVar(&cfg.Bucket, "bucket", cfg.Bucket, "bucketed surface: an existing bucket to use (default: create one)")
	fs.StringVar(&cfg.NamePrefix, "name-prefix", cfg.NamePrefix, "prefix of every stream name the kit makes (default dsc)")
	fs.Func("long-poll-timeout", "the server's long-poll timeout, or auto to measure it once (default 500ms)", func(s string) error {
		if s == "auto" {
			cfg.MeasureLongPoll = true
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a duration such as 500ms or 20s, or auto; got %q", s)
		}
		cfg.LongPollTimeout, cfg.MeasureLongPoll = d, false
		return nil
	})
	fs.DurationVar(&cfg.SpecTimeout, "spec-timeout", cfg.SpecTimeout, "timeout of each spec (default 20s)")
	fs.Func("extensions", "comma-separated enabled extensions ("+strings.Join(knownExtensions, ",")+"), \"none\", or \"auto\" to probe (default auto)", func(s string) error {
		exts, err := parseExtensions(s)
		cfg.Extensions = exts
		return err
	})
	fs.Func("profiles", "comma-separated server profiles whose specific checks run ("+strings.Join(knownProfiles, ",")+"; default none)", func(s string) error {
		cfg.Profiles = nil
		for _, p := range splitList(s) {
			if !contains(knownProfiles, p) {
				return fmt.Errorf("unknown profile %q (known: %s)", p, strings.Join(knownProfiles, ", "))
			}
			cfg.Profiles = append(cfg.Profiles, p)
		}
		return nil
	})
	fs.Func("mode", "smoke | core | full (default full)", func(s string) error {
		if _, ok := modeFilters[Mode(s)]; !ok {
			return fmt.Errorf("mode must be smoke, core or full, not %q", s)
		}
		cfg.Mode = Mode(s)
		return nil
	})
	fs.StringVar(&cfg.LabelFilter, "label-filter", cfg.LabelFilter, "Ginkgo label filter, ANDed with the mode's")
	fs.Func("focus", "run only specs whose full text matches this regular expression (repeatable)", func(s string) error {
		cfg.FocusStrings = append(cfg.FocusStrings, s)
		return nil
	})
	fs.StringVar(&cfg.ReportDir, "report-dir", cfg.ReportDir, "directory for junit.xml, report.json and report.html")
	fs.BoolVar(&cfg.Verbose, "verbose", cfg.Verbose, "verbose Ginkgo output")
	fs.Int64Var(&cfg.RandomSeed, "seed", cfg.RandomSeed, "spec order seed (default time-based)")
}

// parseExtensions reads the --extensions value: "auto" (nil: probe), "none" (empty) or a
// comma-separated list of known extension ids.
func parseExtensions(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "auto":
		return nil, nil
	case "none", "":
		return []string{}, nil
	}
	exts := []string{}
	for _, e := range splitList(s) {
		if !contains(knownExtensions, e) {
			return nil, fmt.Errorf("unknown extension %q (known: %s)", e, strings.Join(knownExtensions, ", "))
		}
		exts = append(exts, e)
	}
	return exts, nil
}

// withDefaults returns cfg with defaults filled in, or an error naming a bad field.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.BaseURL == "" {
		return cfg, errors.New("conformance: BaseURL (--base-url) is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, fmt.Errorf("conformance: BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Surface == "" {
		cfg.Surface = SurfaceFlat
	}
	if cfg.Surface != SurfaceFlat && cfg.Surface != SurfaceBucketed {
		return cfg, fmt.Errorf("conformance: unknown surface %q", cfg.Surface)
	}
	if cfg.StreamPath == "" {
		cfg.StreamPath = "/v1/stream/"
	}
	if !strings.HasPrefix(cfg.StreamPath, "/") || !strings.HasSuffix(cfg.StreamPath, "/") {
		return cfg, fmt.Errorf("conformance: StreamPath %q must start and end with /", cfg.StreamPath)
	}
	if cfg.NamePrefix == "" {
		cfg.NamePrefix = "dsc"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	if cfg.LongPollTimeout <= 0 {
		cfg.LongPollTimeout = 500 * time.Millisecond
	}
	if cfg.SpecTimeout <= 0 {
		cfg.SpecTimeout = 20 * time.Second
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeFull
	}
	if _, ok := modeFilters[cfg.Mode]; !ok {
		return cfg, fmt.Errorf("conformance: unknown mode %q", cfg.Mode)
	}
	for _, e := range cfg.Extensions {
		if !contains(knownExtensions, e) {
			return cfg, fmt.Errorf("conformance: unknown extension %q", e)
		}
	}
	for _, p := range cfg.Profiles {
		if !contains(knownProfiles, p) {
			return cfg, fmt.Errorf("conformance: unknown profile %q", p)
		}
	}
	return cfg, nil
}

// labelFilter builds the run's label filter: mode && extensions && profiles && user.
func (cfg Config) labelFilter() string {
	terms := []string{}
	if f := modeFilters[cfg.Mode]; f != "" {
		terms = append(terms, "("+f+")")
	}
	terms = append(terms, setFilter("ext", cfg.Extensions), setFilter("profile", cfg.Profiles))
	if strings.TrimSpace(cfg.LabelFilter) != "" {
		terms = append(terms, "("+cfg.LabelFilter+")")
	}
	return strings.Join(terms, " && ")
}

// setFilter is `key: isSubsetOf {values}`, or `key: isEmpty` with no values.
func setFilter(key string, values []string) string {
	if len(values) == 0 {
		return key + ": isEmpty"
	}
	v := append([]string(nil), values...)
	sort.Strings(v)
	return key + ": isSubsetOf {" + strings.Join(v, ",") + "}"
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
