package conformance

import (
	"flag"
	"os"
	"testing"
)

// testConfig is filled from the test binary's flags:
//
//	go test ./conformance -args -base-url=http://127.0.0.1:4437 -surface=flat
var testConfig Config

func TestMain(m *testing.M) {
	RegisterFlags(flag.CommandLine, &testConfig)
	flag.Parse()
	os.Exit(m.Run())
}

// TestConformance runs the kit when -base-url (or DS_BASE_URL) names a server.
func TestConformance(t *testing.T) {
	if testConfig.BaseURL == "" {
		testConfig.BaseURL = os.Getenv("DS_BASE_URL")
	}
	if testConfig.BaseURL == "" {
		t.Skip("no server to test: pass -args -base-url=URL or set DS_BASE_URL")
	}
	testConfig.Out = os.Stdout
	Run(t, testConfig)
}
