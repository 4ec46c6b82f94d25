//go:build !linux

package boltstore

import "os"

// fdatasync makes f's written data durable.
func fdatasync(f *os.File) error { return f.Sync() }
