package boltstore

import (
	"os"
	"syscall"
)

// fdatasync makes f's written data durable (and its size), not its other metadata.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
