package model

import "strings"

// CheckGlob validates a subscription pattern (base protocol §6.2): '/'-separated,
// non-empty segments, each "*" (exactly one segment), "**" (zero or more) or a literal
// without '*' ("%2A" or "%2a" in a segment stands for a literal '*', as the reference
// servers read it). A '*' mixed into a segment ("foo*") is refused rather than read
// literally, and so is a pattern over MaxGlobBytes (no longer one can match a name of
// MaxFlatNameBytes). Errors: ErrBadSubscription.
func CheckGlob(pattern string) error {
	if pattern == "" {
		return badSub("pattern must not be empty")
	}
	if len(pattern) > MaxGlobBytes {
		return badSub("pattern must be at most %d bytes", MaxGlobBytes)
	}
	for _, seg := range strings.Split(pattern, "/") {
		switch {
		case seg == "":
			return badSub("pattern %q has an empty segment", pattern)
		case seg == "*", seg == "**":
		case strings.Contains(seg, "*"):
			return badSub("pattern %q: '*' and '**' must be whole segments", pattern)
		}
	}
	return nil
}

// MaxGlobBytes bounds a subscription pattern: room for a MaxFlatNameBytes name written
// with "%2A" escapes and a "**" between every two segments.
const MaxGlobBytes = 4 * MaxFlatNameBytes

// Glob is a compiled pattern: its segments, the wildcards as sentinels that no path
// segment can equal (paths hold no NUL) and "%2A"/"%2a" already read as a literal '*'.
type Glob []string

const (
	globOne  = "\x00*"
	globMany = "\x00**"
)

// CompileGlob compiles a pattern: "*" is exactly one segment, "**" zero or more, any other
// segment a literal; leading and trailing '/' are ignored; "" compiles to nil (no pattern).
func CompileGlob(pattern string) Glob {
	segs := SplitPath(pattern)
	for i, s := range segs {
		switch s {
		case "*":
			segs[i] = globOne
		case "**":
			segs[i] = globMany
		default:
			segs[i] = literalSeg(s)
		}
	}
	return segs
}

// MatchGlob reports whether a root-relative stream path matches pattern (leading and
// trailing '/' ignored on both sides). Pure; patterns need not be checked.
func MatchGlob(pattern, path string) bool {
	g := CompileGlob(pattern)
	return g != nil && g.Match(SplitPath(path))
}

// Match reports whether the segments of a path (SplitPath) match g, in time
// O(len(g) * len(segs)) whatever the wildcards (no backtracking).
func (g Glob) Match(segs []string) bool {
	// cur[j]: the pattern read so far matches segs[:j].
	cur, next := make([]bool, len(segs)+1), make([]bool, len(segs)+1)
	cur[0] = true
	for i, p := range g {
		if p == globMany && i > 0 && g[i-1] == globMany {
			continue // "**/**" is "**"
		}
		alive := false
		for j := range next {
			switch {
			case p == globMany:
				next[j] = cur[j] || j > 0 && next[j-1]
			case j == 0:
				next[j] = false
			default:
				next[j] = cur[j-1] && (p == globOne || p == segs[j-1])
			}
			alive = alive || next[j]
		}
		if !alive {
			return false
		}
		cur, next = next, cur
	}
	return cur[len(segs)]
}

// GlobLiteralPrefix is the part of a pattern before its first wildcard segment, with a
// trailing '/' when a wildcard follows: every matching path starts with it (for prefix
// scans).
func GlobLiteralPrefix(pattern string) string {
	var b strings.Builder
	for _, seg := range SplitPath(pattern) {
		if seg == "*" || seg == "**" {
			return b.String()
		}
		b.WriteString(literalSeg(seg))
		b.WriteByte('/')
	}
	return strings.TrimSuffix(b.String(), "/")
}

// SplitPath splits a root-relative path into segments, ignoring leading and trailing '/'.
func SplitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

var starEscapes = strings.NewReplacer("%2A", "*", "%2a", "*")

func literalSeg(s string) string { return starEscapes.Replace(s) }
