package subs

import "github.com/dsd-project/dsd/model"

// The worker routes StreamChanged with compiled patterns (model.Glob, the rules of
// model.MatchGlob); the Store's Links decides membership.

func compileGlob(pattern string) []string { return model.CompileGlob(pattern) }

func matchGlob(pattern, path string) bool { return model.MatchGlob(pattern, path) }

func splitPath(p string) []string { return model.SplitPath(p) }

func matchSegs(pat, segs []string) bool { return model.Glob(pat).Match(segs) }
