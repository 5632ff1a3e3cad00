package freelist

import (
	"runtime"
	"testing"
)

// TestKeepsUpToItsBound: a value put back is the next one got, across a
// garbage collection (what a sync.Pool does not promise); past the bound,
// values are dropped and new ones made.
func TestKeepsUpToItsBound(t *testing.T) {
	made := 0
	l := New(2, func() *int { made++; v := made; return &v })
	a, b, c := l.Get(), l.Get(), l.Get()
	l.Put(a)
	l.Put(b)
	l.Put(c) // over the bound: dropped
	runtime.GC()
	if got1, got2 := l.Get(), l.Get(); got1 != a || got2 != b {
		t.Errorf("got %d and %d back, want %d and %d", *got1, *got2, *a, *b)
	}
	if d := l.Get(); d == c || made != 4 {
		t.Errorf("a dropped value came back, or %d made (want 4)", made)
	}
}
