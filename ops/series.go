package ops

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// requestSeries resolves the per-request metric series once per label set (issue 19):
// a request looks its series up in a copy-on-write map, no WithLabelValues, no label
// formatting, no lock; a label set seen for the first time is added under a mutex.
type requestSeries struct {
	m    *Metrics
	mu   sync.Mutex
	byID atomic.Pointer[map[seriesKey]*series]
}

// seriesKey is a request's labels: route, method and status.
type seriesKey struct {
	route, method string
	status        int
}

// series are the collectors one request updates.
type series struct {
	dur   prometheus.Observer // dsd_http_request_duration_seconds{route,method,status}
	bytes prometheus.Counter  // dsd_http_response_bytes_total{route}
}

// knownMethods are the methods whose series are kept; a request with another method
// (answered 405) resolves its series each time, so a client cannot grow the map.
func knownMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// get returns the series of k.
func (s *requestSeries) get(k seriesKey) *series {
	if p := s.byID.Load(); p != nil {
		if v, ok := (*p)[k]; ok {
			return v
		}
	}
	v := &series{dur: s.m.reqDur.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
		bytes: s.m.respBytes.WithLabelValues(k.route)}
	if !knownMethod(k.method) || k.status < 100 || k.status > 599 {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.byID.Load()
	next := make(map[seriesKey]*series, 1+lenOf(old))
	if old != nil {
		for kk, vv := range *old {
			next[kk] = vv
		}
	}
	next[k] = v
	s.byID.Store(&next)
	return v
}

func lenOf(p *map[seriesKey]*series) int {
	if p == nil {
		return 0
	}
	return len(*p)
}
