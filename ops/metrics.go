// Package ops is dsd's operator surface (D12): the request log and the Prometheus metrics
// around the protocol handler, and the admin listener (/metrics, /healthz, /readyz,
// /debug/pprof/, /backup). Nothing here lives in the stream namespace.
package ops

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dsd-project/dsd/engine"
)

// Metrics holds dsd's Prometheus collectors (names prefixed dsd_). It implements
// engine.Observer for the commit measurements.
type Metrics struct {
	reg           *prometheus.Registry
	reqDur        *prometheus.HistogramVec // route, method, status
	respBytes     *prometheus.CounterVec   // route
	appends       prometheus.Counter
	appendBytes   prometheus.Counter
	commitOps     prometheus.Histogram
	commitDur     prometheus.Histogram
	storageErrors prometheus.Counter
	live          *prometheus.GaugeVec // mode
	eng           atomic.Pointer[engine.Engine]
}

// NewMetrics returns dsd's collectors, with the Go runtime and process collectors, in a
// registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reqDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "dsd_http_request_duration_seconds",
		Help:    "HTTP requests by route, method and status, and their duration (live reads until they end).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"route", "method", "status"})
	m.respBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dsd_http_response_bytes_total", Help: "Response body bytes written, by route.",
	}, []string{"route"})
	m.appends = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "dsd_appends_total", Help: "Successful append requests (POST to a stream or its append-batch).",
	})
	m.appendBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "dsd_append_bytes_total", Help: "Request body bytes of successful appends, after Content-Encoding decoding.",
	})
	m.commitOps = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "dsd_commit_group_ops", Help: "Operations per commit group (one bbolt transaction, one fsync).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	m.commitDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "dsd_commit_duration_seconds", Help: "Duration of one commit group's transaction, its fsync included.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	m.storageErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "dsd_storage_errors_total", Help: "Commit groups that failed in storage (writes are then refused until a probe commit succeeds, D4).",
	})
	m.live = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dsd_live_readers", Help: "Live reads in progress, by mode (sse, long-poll).",
	}, []string{"mode"})
	m.reg.MustRegister(m.reqDur, m.respBytes, m.appends, m.appendBytes, m.commitOps,
		m.commitDur, m.storageErrors, m.live, engineCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Committed implements engine.Observer.
func (m *Metrics) Committed(ops int, d time.Duration, err error) {
	if err != nil {
		m.storageErrors.Inc()
		return
	}
	m.commitOps.Observe(float64(ops))
	m.commitDur.Observe(d.Seconds())
}

// SetEngine makes the stream and bucket gauges and dsd_ready read e.
func (m *Metrics) SetEngine(e *engine.Engine) { m.eng.Store(e) }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

var (
	descStreams = prometheus.NewDesc("dsd_streams", "Streams in the data file (paths bound to a live stream).", nil, nil)
	descBuckets = prometheus.NewDesc("dsd_buckets", "Buckets in the data file.", nil, nil)
	descReady   = prometheus.NewDesc("dsd_ready", "1 when the data file is open and writable, else 0.", nil, nil)
	descLoaded  = prometheus.NewDesc("dsd_streams_loaded", "Stream incarnations held in memory (at most --max-loaded-streams after each sweep).", nil, nil)
	descUnloads = prometheus.NewDesc("dsd_stream_unloads_total", "Idle streams unloaded from memory past --max-loaded-streams.", nil, nil)
)

// engineCollector reads the engine's counts once per scrape.
type engineCollector struct{ m *Metrics }

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStreams
	ch <- descBuckets
	ch <- descReady
	ch <- descLoaded
	ch <- descUnloads
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.m.eng.Load()
	if e == nil {
		ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, 0)
		return
	}
	ready := 0.0
	if e.Ready() == nil {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, ready)
	ls := e.Loaded()
	ch <- prometheus.MustNewConstMetric(descLoaded, prometheus.GaugeValue, float64(ls.Streams))
	ch <- prometheus.MustNewConstMetric(descUnloads, prometheus.CounterValue, float64(ls.Unloads))
	if b, s, err := e.Counts(); err == nil {
		ch <- prometheus.MustNewConstMetric(descBuckets, prometheus.GaugeValue, float64(b))
		ch <- prometheus.MustNewConstMetric(descStreams, prometheus.GaugeValue, float64(s))
	}
}
