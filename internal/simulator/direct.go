package simulator

// The event endpoints answered in-process: the same code as the HTTP
// handlers (profiles, caps, visibility), without HTTP, authentication or
// faults. The counting engine's tests drive it through these at thousands
// of schedules a second.

func (s *Simulator) directListing(key string, q listingQuery) Listing {
	n := s.byKey[key]
	if n == nil {
		return Listing{}
	}
	now := s.lockNode(n)
	defer n.mu.Unlock()
	reqs, runnings, last := s.answer(n, q, now, nil)
	return Listing{Reqs: reqs, Runnings: runnings, Last: last}
}

func (s *Simulator) directSince(key string, since int64) Listing {
	if s.cfg.ExclusiveSince && since < maxInt64 {
		since++
	}
	return s.directListing(key, listingQuery{lo: since, hi: maxInt64, limit: s.cfg.ListingCap})
}

func (s *Simulator) directRange(key string, desc bool, start, end int64, limit int) Listing {
	if limit < 0 {
		limit = 0
	}
	if s.cfg.MaxLimit > 0 && limit > s.cfg.MaxLimit {
		limit = s.cfg.MaxLimit
	}
	return s.directListing(key, listingQuery{lo: start, hi: end, limit: limit, limited: true, desc: desc})
}

func (s *Simulator) directCount(key string, start, end int64) int64 {
	n := s.byKey[key]
	if n == nil {
		return 0
	}
	now := s.lockNode(n)
	defer n.mu.Unlock()
	return s.count(n, start, end, now)
}
