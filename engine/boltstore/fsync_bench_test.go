package boltstore

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkFdatasyncFloor is the physical floor of a group's durability point on the
// disk under b.TempDir (set TMPDIR to measure another filesystem): one write of size
// bytes at the end of what was written, then fdatasync, ns/op per group. The file's
// blocks are either new (grow: the size changes, so the filesystem commits its journal
// too), already written with zeros and synced (overwrite: data only, what a preallocated
// log segment costs) or reserved with fallocate but never written (fallocate: the
// extents' unwritten flag changes, a journal commit again). A commit group of 13-22
// appends of 100 B (50 writers) is a record of 1.4-2.4 KiB. Run it with -benchtime 1000x: the file spans
// b.N writes.
func BenchmarkFdatasyncFloor(b *testing.B) {
	for _, mode := range []string{"grow", "overwrite", "fallocate"} {
		for _, size := range []int{100, 1024, 4096} {
			b.Run(fmt.Sprintf("blocks=%s/size=%d", mode, size), func(b *testing.B) {
				benchFdatasync(b, mode, size)
			})
		}
	}
}

func benchFdatasync(b *testing.B, mode string, size int) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	span := int64(b.N)*int64(size) + 1<<20
	switch mode {
	case "overwrite":
		if _, err := f.WriteAt(make([]byte, span), 0); err != nil {
			b.Fatal(err)
		}
	case "fallocate":
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, span); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i) | 1
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.WriteAt(buf, int64(i)*int64(size)); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
}
