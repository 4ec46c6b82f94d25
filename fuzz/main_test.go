package fuzz

import (
	"os"
	"testing"
)

// TestMain removes the data directories the shared engines of this package live in.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []*string{&httpDir, &harnessDir} {
		if *dir != "" {
			os.RemoveAll(*dir)
		}
	}
	os.Exit(code)
}
