package ops

import (
	"errors"
	"net/http"

	"github.com/dsd-project/dsd/model"
)

// lineageBody is the body of GET /lineage/{bucket}/{stream}.
type lineageBody struct {
	ForkedFrom    *string `json:"forked_from"`
	ForkOffset    *string `json:"fork_offset"`
	ForkSubOffset uint64  `json:"fork_sub_offset,omitempty"`
	Forks         int     `json:"forks"`
}

// HandleLineage serves GET /lineage/{bucket}/{stream} on the admin listener: the stream's
// fork parent as created ({"forked_from": path or null, "fork_offset": offset or null,
// "fork_sub_offset", "forks": live forks referencing it}), which no protocol response
// carries (B-4.2-18). 401/403 as for a read of the bucket, 404 when the stream is absent.
func (a *Admin) HandleLineage(access ReadAccess) {
	a.mux.HandleFunc("GET /lineage/{bucket}/{stream}", func(w http.ResponseWriter, r *http.Request) {
		canRead, ok := access(r)
		key := model.StreamKey{Bucket: r.PathValue("bucket"), Stream: r.PathValue("stream")}
		switch {
		case !ok:
			refuseUnauthorized(w, r)
			return
		case !canRead(key.Bucket):
			refuse(w, r, detailed(model.ErrForbidden, "this request needs read:"+key.Bucket))
			return
		}
		e := a.eng.Load()
		if e == nil {
			writeStatus(w, http.StatusServiceUnavailable, "starting", "the data file is being opened")
			return
		}
		l, err := e.Lineage(key)
		switch {
		case errors.Is(err, model.ErrStreamNotFound), errors.Is(err, model.ErrStreamGone):
			refuse(w, r, detailed(model.ErrStreamNotFound, "no stream "+key.String()))
			return
		case err != nil:
			writeStatus(w, http.StatusServiceUnavailable, "storage_error", err.Error())
			return
		}
		body := lineageBody{Forks: l.Forks, ForkSubOffset: l.ForkSubOffset}
		if l.ForkedFrom != "" {
			off := l.ForkOffset.String()
			body.ForkedFrom, body.ForkOffset = &l.ForkedFrom, &off
		}
		writeBody(w, body)
	})
}

// Mount adds h to the admin listener at pattern (http.ServeMux syntax), e.g. the console
// at "/console/".
func (a *Admin) Mount(pattern string, h http.Handler) { a.mux.Handle(pattern, h) }
