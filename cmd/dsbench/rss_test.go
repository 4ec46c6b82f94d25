package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tnode\nVmPeak:\t 1200000 kB\nVmRSS:\t   81234 kB\nRssAnon:\t 70000 kB\n"
	kib, err := parseVmRSS(strings.NewReader(status))
	if err != nil || kib != 81234 {
		t.Fatalf("parseVmRSS = %d, %v; want 81234", kib, err)
	}
	if _, err := parseVmRSS(strings.NewReader("Name:\tkthreadd\nState:\tS\n")); err == nil {
		t.Fatal("no VmRSS line accepted")
	}
	if _, err := parseVmRSS(strings.NewReader("VmRSS:\t12 MB\n")); err == nil {
		t.Fatal("unexpected unit accepted")
	}
}

func TestReadVmRSSOfThisProcess(t *testing.T) {
	kib, err := readVmRSS(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if kib <= 0 {
		t.Fatalf("own VmRSS = %d KiB", kib)
	}
}
