// Package freelist keeps idle values (buffers, compressors, decompressors)
// for reuse, up to a bound.
//
// Not a sync.Pool: a pool is emptied at each garbage collection, and one
// follows most /metrics scrapes (internal/app/gc.go), so nearly every
// answer made a new compressor (hundreds of KiB, zeroed).
package freelist

// List keeps up to its bound of idle values. Safe for concurrent use.
type List[T any] struct {
	idle    chan T
	newItem func() T
}

// New returns a list keeping up to n idle values; newItem makes one when
// none is idle.
func New[T any](n int, newItem func() T) *List[T] {
	return &List[T]{idle: make(chan T, n), newItem: newItem}
}

// Get returns an idle value, or a new one.
func (l *List[T]) Get() T {
	select {
	case v := <-l.idle:
		return v
	default:
		return l.newItem()
	}
}

// Put keeps v for a later Get, unless the list is full.
func (l *List[T]) Put(v T) {
	select {
	case l.idle <- v:
	default: // enough kept
	}
}
