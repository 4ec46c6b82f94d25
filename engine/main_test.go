package engine

import (
	"os"
	"testing"

	"github.com/dsd-project/dsd/engine/jsstore/jstest"
)

// TestMain removes the shared JetStream cluster's data once the tests ran on it
// (DSD_TEST_BACKEND=jetstream).
func TestMain(m *testing.M) {
	code := m.Run()
	jstest.RemoveShared()
	os.Exit(code)
}
