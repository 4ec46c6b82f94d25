package main

import (
	"flag"
	"time"
)

// loopWindow is the measured window of a closed-loop workload and the unmeasured run
// before it.
type loopWindow struct {
	Duration time.Duration // measured window
	Warmup   time.Duration // unmeasured run before the window
}

// registerWindow adds --duration (default dur) and --warmup (default 1 s) to fs; each
// names the windows when a workload runs several ("each phase"; "" for one).
func registerWindow(fs *flag.FlagSet, w *loopWindow, dur time.Duration, each string) {
	durHelp, warmHelp := "measured duration", "unmeasured warm-up before the measured duration"
	if each != "" {
		durHelp, warmHelp = "measured duration of "+each, "unmeasured warm-up before "+each
	}
	fs.DurationVar(&w.Duration, "duration", dur, durHelp)
	fs.DurationVar(&w.Warmup, "warmup", time.Second, warmHelp)
}

// registerServerPID adds --server-pid (default $DS_SERVER_PID) to fs: the server process
// on this machine of which what is read from /proc (0: none).
func registerServerPID(fs *flag.FlagSet, pid *int, what string) {
	fs.IntVar(pid, "server-pid", envInt("DS_SERVER_PID"),
		"server process on this machine whose "+what+" (default $DS_SERVER_PID; 0 = none)")
}
