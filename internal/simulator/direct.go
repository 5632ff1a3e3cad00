package simulator

// The event endpoints answered in-process: the same code as the HTTP
// handlers (readings, caps, visibility), without HTTP, authentication or
// faults. The counting engine's tests drive it through these at thousands
// of schedules a second.

func (s *Simulator) directListing(key string, q listingQuery) Listing {
	n := s.byKey[key]
	if n == nil {
		return Listing{}
	}
	rd := s.readings()
	now := s.lockNode(n)
	defer n.mu.Unlock()
	reqs, runnings, last := s.answer(n, q, now, rd, nil)
	date, _ := s.dateHeader(rd)
	return Listing{Reqs: reqs, Runnings: runnings, Last: last, Date: date}
}

func (s *Simulator) directSince(key string, since int64) Listing {
	return s.directListing(key, s.sinceQuery(since))
}

func (s *Simulator) directRange(key string, desc bool, start, end int64, limit int) Listing {
	return s.directListing(key, s.rangeQuery(desc, start, end, max(limit, 0)))
}

func (s *Simulator) directCount(key string, start, end int64) int64 {
	n := s.byKey[key]
	if n == nil {
		return 0
	}
	rd := s.readings()
	lo, hi := rd.inclusive(start, end)
	now := s.lockNode(n)
	defer n.mu.Unlock()
	return s.count(n, lo, hi, now, rd)
}
