// Package proccpu reads the process's CPU time, for benchmarks that report CPU per
// operation (robust when the machine is shared, issue 19).
package proccpu

import "syscall"

// Nanos returns the process's user and system CPU time so far, in nanoseconds (0 when
// getrusage fails).
func Nanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
