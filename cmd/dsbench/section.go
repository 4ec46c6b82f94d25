package main

import (
	"errors"
	"os"
	"strings"
)

// Markers delimiting the part of BENCHMARKS.md that `dsbench report` owns.
const (
	sectionBegin = "<!-- BEGIN GENERATED: peers -->"
	sectionEnd   = "<!-- END GENERATED: peers -->"
)

// replaceSection returns doc with the text between the generated-section markers replaced by
// body. A doc without the markers gets them appended (a new file gets a title first). A doc
// with only one marker, or with them in the wrong order, is an error: someone edited it by
// hand and we must not guess.
func replaceSection(doc, body string) (string, error) {
	body = strings.TrimRight(body, "\n") + "\n"
	b, e := strings.Index(doc, sectionBegin), strings.Index(doc, sectionEnd)
	switch {
	case b < 0 && e < 0:
		if strings.TrimSpace(doc) == "" {
			doc = "# Benchmarks\n"
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + sectionBegin + "\n" + body + sectionEnd + "\n", nil
	case b < 0 || e < 0 || e < b:
		return "", errors.New("BENCHMARKS.md: generated-section markers are unbalanced or out of order")
	}
	return doc[:b+len(sectionBegin)] + "\n" + body + doc[e:], nil
}

// writeSection replaces the generated section of the file at path (created if missing).
func writeSection(path, body string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc, err := replaceSection(string(old), body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
