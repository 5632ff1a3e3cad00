package collector

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// WriteTo writes the scrape to w as promhttp writes families in the
// scrape's format: the nodes' families, the scrape's gauges and others
// (gathered elsewhere, such as the exporter's own metrics), in the order
// of their names, then OpenMetrics' "# EOF". A family of others named as
// one already written (not expected: they are named apart, and a scraper
// takes one family of a name) is left out and reported in the error, as is
// an encoding or write error; the rest is written all the same.
func (t *TextScrape) WriteTo(w io.Writer, others []*dto.MetricFamily) error {
	c := t.c
	dynamic := append(slices.Clone(others), c.scrape.gathered()...)
	slices.SortStableFunc(dynamic, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	// The lines are small (a line or two, often) and would go through the
	// response writer's layers one by one: a buffer makes them a few large
	// writes.
	if c.out == nil {
		c.out = bufio.NewWriterSize(w, 32<<10)
	} else {
		c.out.Reset(w)
	}
	bw := c.out
	defer bw.Reset(nil) // the buffer is kept, not the writer
	enc := expfmt.NewEncoder(bw, c.format)
	var errs []error
	last := "" // the name of the latest family written
	writeOther := func(mf *dto.MetricFamily) {
		if mf.GetName() == last {
			errs = append(errs, fmt.Errorf("family %s gathered twice: the first is served", last))
			return
		}
		last = mf.GetName()
		if err := enc.Encode(mf); err != nil {
			errs = append(errs, fmt.Errorf("family %s: %w", mf.GetName(), err))
		}
	}
	c.cursors = slices.Grow(c.cursors[:0], len(c.nodes))[:len(c.nodes)]
	clear(c.cursors)
	for _, fam := range c.order {
		h, ok := c.headers[fam]
		if !ok {
			continue // no node has had this family in this format
		}
		for len(dynamic) > 0 && dynamic[0].GetName() < h.name {
			writeOther(dynamic[0])
			dynamic = dynamic[1:]
		}
		wrote := false
		for i := range c.nodes {
			nt := &c.nodes[i]
			k := c.cursors[i]
			end := k
			for end < len(nt.chunks) && int(nt.chunks[end].fam) == fam {
				end++
			}
			if end == k {
				continue
			}
			if !wrote {
				_, _ = bw.Write(h.lines) // a write error stays in bw: Flush returns it
				wrote = true
			}
			_, _ = bw.Write(nt.text[nt.start(k):nt.chunks[end-1].end]) // the node's lines of the family, in one piece
			c.cursors[i] = end
		}
		if wrote {
			last = h.name
		}
	}
	for _, mf := range dynamic {
		writeOther(mf)
	}
	if closer, ok := enc.(expfmt.Closer); ok {
		if err := closer.Close(); err != nil { // OpenMetrics' "# EOF"
			errs = append(errs, err)
		}
	}
	if err := bw.Flush(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
