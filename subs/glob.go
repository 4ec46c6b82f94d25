package subs

import "strings"

// A compiled pattern: its segments, with the wildcards as sentinels that no path segment
// can equal (paths hold no NUL) and "%2A"/"%2a" already read as a literal '*'.
const (
	anyOne  = "\x00*"
	anyMany = "\x00**"
)

// compileGlob compiles a subscription pattern (PROTOCOL §6.2, the rules of
// model.MatchGlob): "*" is exactly one segment, "**" zero or more, any other segment a
// literal. Leading and trailing '/' are ignored. "" compiles to nil (no pattern).
func compileGlob(pattern string) []string {
	segs := splitPath(pattern)
	for i, s := range segs {
		switch s {
		case "*":
			segs[i] = anyOne
		case "**":
			segs[i] = anyMany
		default:
			segs[i] = starEscapes.Replace(s)
		}
	}
	return segs
}

var starEscapes = strings.NewReplacer("%2A", "*", "%2a", "*")

// matchGlob reports whether a bucket-local path matches pattern. The worker uses compiled
// patterns only to route StreamChanged; the Store's Links decides membership.
func matchGlob(pattern, path string) bool {
	g := compileGlob(pattern)
	return g != nil && matchSegs(g, splitPath(path))
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case anyMany:
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		case anyOne:
			if len(segs) == 0 {
				return false
			}
		default:
			if len(segs) == 0 || pat[0] != segs[0] {
				return false
			}
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
