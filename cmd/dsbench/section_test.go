package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceSectionKeepsOtherSections(t *testing.T) {
	doc := "# Benchmarks\n\nIntro by someone else.\n\n" + sectionBegin + "\nold table\n" + sectionEnd + "\n\n## Engine notes\nkeep me\n"
	got, err := replaceSection(doc, "new table")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Benchmarks\n\nIntro by someone else.\n\n" + sectionBegin + "\nnew table\n" + sectionEnd + "\n\n## Engine notes\nkeep me\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	again, _ := replaceSection(got, "new table")
	if again != got {
		t.Fatal("replacing with the same body is not idempotent")
	}
}

func TestReplaceSectionCreatesAndAppends(t *testing.T) {
	got, err := replaceSection("", "t")
	if err != nil || got != "# Benchmarks\n\n"+sectionBegin+"\nt\n"+sectionEnd+"\n" {
		t.Fatalf("new doc: %q, %v", got, err)
	}
	got, err = replaceSection("# B\n\nother\n", "t")
	if err != nil || !strings.HasPrefix(got, "# B\n\nother\n\n"+sectionBegin) {
		t.Fatalf("appended: %q, %v", got, err)
	}
}

func TestReplaceSectionRefusesBrokenMarkers(t *testing.T) {
	for _, doc := range []string{sectionBegin + "\nx", "x\n" + sectionEnd, sectionEnd + "\n" + sectionBegin} {
		if _, err := replaceSection(doc, "t"); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
}

func TestWriteSectionCreatesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := writeSection(p, "body"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), sectionBegin+"\nbody\n"+sectionEnd) {
		t.Fatalf("file: %q", b)
	}
}
