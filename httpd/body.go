package httpd

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/dsd-project/dsd/model"
)

// readBody reads a request body of at most max bytes (A-27: chunked bodies are read in
// full before anything commits). Errors: model.ErrTooLarge.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, model.ErrTooLarge
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body := http.MaxBytesReader(w, r.Body, max)
	var buf []byte
	if r.ContentLength > 0 {
		buf = make([]byte, r.ContentLength)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, bodyError(err)
		}
		return buf, nil
	}
	buf, err := io.ReadAll(body)
	if err != nil {
		return nil, bodyError(err)
	}
	return buf, nil
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return model.ErrTooLarge
	}
	return fmt.Errorf("%w: %v", model.ErrBadBody, err)
}
