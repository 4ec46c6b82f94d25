package main

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStatCPU(t *testing.T) {
	stat := "4242 (dsd (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 37 0 0 20 0 9 0 100 0 0\n"
	d, err := parseProcStatCPU([]byte(stat))
	if err != nil || d != 1870*time.Millisecond {
		t.Fatalf("parseProcStatCPU = %v, %v; want 1.87s (150+37 ticks)", d, err)
	}
	for _, bad := range []string{"4242 dsd S 1", "4242 (dsd) S 1 2 3", "4242 (dsd) S 1 4242 4242 0 -1 4194560 1234 0 0 0 x 37"} {
		if _, err := parseProcStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseProcStatCPU(%q) accepted", bad)
		}
	}
}

func TestReadProcCPUOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	deadline := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(deadline) { // burn CPU so that at least a tick is counted
	}
	d, err := readProcCPU(os.Getpid())
	if err != nil || d <= 0 {
		t.Fatalf("readProcCPU(self) = %v, %v; want > 0", d, err)
	}
}
