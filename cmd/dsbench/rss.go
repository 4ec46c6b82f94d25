package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// readVmRSS returns the resident set size of process pid in KiB (/proc/PID/status VmRSS).
func readVmRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseVmRSS(f)
}

// parseVmRSS finds "VmRSS:   123456 kB" in a /proc/PID/status text and returns the KiB.
func parseVmRSS(r io.Reader) (int64, error) { return parseStatusKiB(r, "VmRSS") }

// readStatusKiB returns field (VmRSS, RssAnon, RssFile, ...) of /proc/PID/status in KiB.
func readStatusKiB(pid int, field string) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseStatusKiB(f, field)
}

// parseStatusKiB finds "FIELD:   123456 kB" in a /proc/PID/status text and returns the KiB.
func parseStatusKiB(r io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s line %q: want \"N kB\"", field, sc.Text())
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s line (kernel thread or exited process?)", field)
}
