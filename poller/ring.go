package poller

// ring keeps the latest values added, up to a size its owner gives at each
// add (a constant: RecentEvents, RecentPolls). Its zero value is empty.
type ring[T any] struct {
	vals []T // at most size, a ring once full
	next int // where the next value goes once full
}

// add keeps vs, dropping the oldest values beyond size.
func (r *ring[T]) add(size int, vs ...T) {
	if len(vs) > size {
		vs = vs[len(vs)-size:]
	}
	for _, v := range vs {
		if len(r.vals) < size {
			if len(r.vals) == cap(r.vals) {
				// Doubling up to size, not past it: append's growth held
				// 32 places for the 20 latest events, at 200 nodes a
				// third of a megabyte of the live heap.
				grown := make([]T, len(r.vals), min(max(2*len(r.vals), 4), size))
				copy(grown, r.vals)
				r.vals = grown
			}
			r.vals = append(r.vals, v)
			continue
		}
		r.vals[r.next] = v
		r.next = (r.next + 1) % size
	}
}

// newestFirst returns a copy of the values, the latest added first.
func (r *ring[T]) newestFirst() []T {
	n := len(r.vals)
	out := make([]T, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.vals[(r.next-i+n)%n])
	}
	return out
}
