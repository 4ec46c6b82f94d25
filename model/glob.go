package model

import "strings"

// CheckGlob validates a subscription pattern (base protocol §6.2): '/'-separated,
// non-empty segments, each "*" (exactly one segment), "**" (zero or more) or a literal
// without '*' ("%2A" or "%2a" in a segment stands for a literal '*', as the reference
// servers read it). A '*' mixed into a segment ("foo*") is refused rather than read
// literally. Errors: ErrBadSubscription.
func CheckGlob(pattern string) error {
	if pattern == "" {
		return badSub("pattern must not be empty")
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

// MatchGlob reports whether a root-relative stream path matches pattern: "*" matches
// exactly one segment, "**" zero or more, any other segment itself (with %2A read as '*').
// Leading and trailing '/' are ignored on both sides. Pure; patterns need not be checked.
func MatchGlob(pattern, path string) bool {
	return matchSegs(splitSegs(pattern), splitSegs(path))
}

// GlobLiteralPrefix is the part of a pattern before its first wildcard segment, with a
// trailing '/' when a wildcard follows: every matching path starts with it (for prefix
// scans).
func GlobLiteralPrefix(pattern string) string {
	var b strings.Builder
	for _, seg := range splitSegs(pattern) {
		if seg == "*" || seg == "**" {
			return b.String()
		}
		b.WriteString(literalSeg(seg))
		b.WriteByte('/')
	}
	return strings.TrimSuffix(b.String(), "/")
}

func splitSegs(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case "**":
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		case "*":
			if len(segs) == 0 {
				return false
			}
		default:
			if len(segs) == 0 || literalSeg(pat[0]) != segs[0] {
				return false
			}
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

var starEscapes = strings.NewReplacer("%2A", "*", "%2a", "*")

func literalSeg(s string) string { return starEscapes.Replace(s) }
