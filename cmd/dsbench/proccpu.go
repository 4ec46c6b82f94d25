package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// readProcCPU returns the user+system CPU time process pid has used so far, from
// /proc/PID/stat (10 ms resolution), to report what a server on the same machine spent
// on a workload.
func readProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStatCPU(b)
}

// parseProcStatCPU takes utime and stime (fields 14 and 15) from a /proc/PID/stat text. The
// command name (field 2) is in parentheses and may hold spaces, so fields are counted after
// the last ')'.
func parseProcStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no ')' in %q", stat)
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want >= 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
