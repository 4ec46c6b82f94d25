package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
)

// Reqs lists the requirement ids a spec checks.
type Reqs []string

// watchdog bounds every spec node in case a body ignores its context; the effective
// per-spec budget is Config.SpecTimeout, applied to the context the body receives.
const watchdog = 10 * time.Minute

// Section declares a top-level container for one spec file's section: text is its title
// ("5.2 Append"), sec its sec:<id> label. Further Labels (e.g. ext:buckets) are validated
// against the vocabulary and inherited by every spec inside.
func Section(sec, text string, args ...any) bool {
	if err := validateLabel("sec:" + sec); err != nil {
		panic(fmt.Sprintf("conformance: Section %q: %v", text, err))
	}
	if err := validateArgLabels(args); err != nil {
		panic(fmt.Sprintf("conformance: Section %q: %v", text, err))
	}
	return ginkgo.Describe(text, append([]any{ginkgo.Label("sec:" + sec)}, args...)...)
}

// ConformanceIt declares one spec, the way Kubernetes' framework.ConformanceIt does: it
// labels the spec req:<level> and with each requirement id, prefixes the text with
// [LEVEL], and runs body with a fresh *S (its own client, transcript and cleanup). The
// last argument must be the body, func(*S); others are Ginkgo decorators (Labels are
// validated). An unknown id or label, or a level above every listed requirement, panics
// during tree construction, which stops the run before any spec executes.
func ConformanceIt(level Level, reqs Reqs, text string, args ...any) bool {
	if len(args) == 0 {
		panic(fmt.Sprintf("conformance: spec %q has no body", text))
	}
	body, ok := args[len(args)-1].(func(*S))
	if !ok {
		panic(fmt.Sprintf("conformance: spec %q: last argument must be func(*S), got %T", text, args[len(args)-1]))
	}
	decorators := args[:len(args)-1]
	if err := validateSpec(level, reqs, text, decorators); err != nil {
		panic(fmt.Sprintf("conformance: spec %q: %v", text, err))
	}
	labels := ginkgo.Label(append([]string{level.label()}, reqs...)...)
	nodeArgs := append([]any{labels}, decorators...)
	nodeArgs = append(nodeArgs, ginkgo.SpecTimeout(watchdog), func(ctx ginkgo.SpecContext) {
		rt := current()
		cctx, cancel := context.WithTimeout(ctx, rt.cfg.SpecTimeout)
		s := newS(cctx, rt)
		ginkgo.DeferCleanup(func() {
			cancel()
			s.finish()
		})
		body(s)
	})
	return ginkgo.It("["+string(level)+"] "+text, nodeArgs...)
}

// validateSpec checks a spec's metadata against the registries.
func validateSpec(level Level, reqs Reqs, text string, decorators []any) error {
	if level.rank() == 0 {
		return fmt.Errorf("unknown level %q", level)
	}
	if len(reqs) == 0 {
		return fmt.Errorf("names no requirement id")
	}
	if strings.TrimSpace(text) != text || text == "" {
		return fmt.Errorf("text must be non-empty without surrounding whitespace")
	}
	seen := map[string]bool{}
	for _, id := range reqs {
		if !isRequirementID(id) {
			return fmt.Errorf("%q is not a requirement id", id)
		}
		if err := validateLabel(id); err != nil {
			return err
		}
		if seen[id] {
			return fmt.Errorf("requirement %s listed twice", id)
		}
		seen[id] = true
	}
	if err := checkLevel(level, reqs); err != nil {
		return err
	}
	return validateArgLabels(decorators)
}

// validateArgLabels validates the Labels among Ginkgo decorator arguments.
func validateArgLabels(args []any) error {
	for _, a := range args {
		ls, ok := a.(ginkgo.Labels)
		if !ok {
			continue
		}
		for _, l := range ls {
			if strings.HasPrefix(l, "req:") || isRequirementID(l) {
				return fmt.Errorf("label %q is set by ConformanceIt, not by hand", l)
			}
			if err := validateLabel(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// Ext is the label of an extension-gated spec or section: Ext("buckets") = ext:buckets.
func Ext(id string) ginkgo.Labels { return ginkgo.Label("ext:" + id) }

// Profile is the label of a server-profile spec: Profile("dsd") = profile:dsd.
func Profile(id string) ginkgo.Labels { return ginkgo.Label("profile:" + id) }

// Label is ginkgo.Label, for spec files that do not import Ginkgo.
func Label(labels ...string) ginkgo.Labels { return ginkgo.Label(labels...) }
