package engine

import (
	"io"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the data file to w while the engine serves: one
// read transaction (writers are not blocked; while it lasts the file cannot be remapped,
// so a file growing past its mapping, 1 GiB at first, delays writes until the copy ends).
// The copy holds everything committed before the call. size, when set, is called with
// the copy's size in bytes before the first byte is written. Open or CheckFile reads the
// copy. Errors: model.ErrShuttingDown, w's errors, storage errors.
func (e *Engine) Backup(w io.Writer, size func(int64)) (int64, error) {
	if e.closing.Load() {
		return 0, e.checkWritable()
	}
	var n int64
	err := e.db.View(func(tx *bolt.Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}
