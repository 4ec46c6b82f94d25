package engine

import "testing"

// Lineage names a fork's source and fork point, and counts a source's forks.
func TestLineage(t *testing.T) {
	te := newTestEngine(t)
	te.mustCreate("src", "text/plain", "abc")
	at := off(3)
	if _, err := te.Create(key("f"), forkReq("src", &at, 0)); err != nil {
		t.Fatal(err)
	}
	l, err := te.Lineage(key("f"))
	if err != nil || l.ForkedFrom != "/test/src" || l.ForkOffset != off(3) || l.Forks != 0 {
		t.Fatalf("fork lineage %+v %v", l, err)
	}
	l, err = te.Lineage(key("src"))
	if err != nil || l.ForkedFrom != "" || l.Forks != 1 {
		t.Fatalf("source lineage %+v %v", l, err)
	}
	if _, err := te.Lineage(key("none")); err == nil {
		t.Fatal("lineage of a missing stream: no error")
	}
}
