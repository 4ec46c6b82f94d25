package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildRevision is the VCS revision passed by `make build` (-ldflags -X), for builds
// without the toolchain's VCS stamp (-buildvcs=false, or a git worktree it cannot read).
var buildRevision string

// versionString is "dsd VERSION (revision REV[-dirty], TIME) GOVERSION", from the build
// information the Go toolchain embeds (module version; VCS stamp when built in a checkout).
func versionString() string {
	version, rev, when, dirty := "(unknown)", "unknown", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = ", " + s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "unknown" && buildRevision != "" {
		rev = buildRevision
	}
	if dirty {
		rev += "-dirty"
	}
	return fmt.Sprintf("dsd %s (revision %s%s) %s", version, rev, when, runtime.Version())
}
