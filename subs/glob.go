package subs

import "strings"

// matchGlob reports whether a bucket-local stream path matches a subscription pattern:
// "*" matches exactly one segment, "**" zero or more, any other segment literally, with
// "%2A"/"%2a" in a pattern read as a literal "*" (PROTOCOL §6.2, as both references).
// Leading and trailing '/' are ignored on both sides. The worker uses it only to route
// StreamChanged; the Store's Links decides membership.
func matchGlob(pattern, path string) bool {
	return matchSegs(splitPath(pattern), splitPath(path))
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

func literalSeg(s string) string {
	return strings.NewReplacer("%2A", "*", "%2a", "*").Replace(s)
}
