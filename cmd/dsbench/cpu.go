package main

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time this process has used so far (getrusage), so
// that a workload can report what its own client side cost on a machine it shares with the
// server.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp returns microseconds of CPU per operation.
func cpuPerOp(cpu time.Duration, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(ops)
}
