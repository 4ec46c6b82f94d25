package main

import (
	"fmt"
	"os"
	"syscall"
)

// raiseNoFile raises this process's RLIMIT_NOFILE soft limit to at least need file
// descriptors (one per connection), raising the hard limit too when allowed (root). It
// prints a warning and leaves the limit as high as it could when need cannot be met.
func raiseNoFile(need uint64) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(os.Stderr, "dsbench: getrlimit: %v\n", err)
		return 0
	}
	if lim.Cur >= need {
		return lim.Cur
	}
	want := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err == nil {
		return need
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(os.Stderr, "dsbench: setrlimit: %v\n", err)
	}
	fmt.Fprintf(os.Stderr, "dsbench: warning: %d file descriptors wanted, limit is %d\n", need, lim.Cur)
	return lim.Cur
}
