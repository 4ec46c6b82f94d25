package main

import (
	"os"
	"runtime/pprof"
)

// startCPUProfile profiles this process into path until the returned stop is called, to see
// what the generator itself costs (go tool pprof bin/dsbench FILE).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
