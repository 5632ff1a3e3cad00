package simulator

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func acceptsGzip(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Accept-Encoding")), "gzip")
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzipPool.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	gzipPool.Put(zw)
	return buf.Bytes()
}

// writeBody answers status with body, gzip-compressed when the client
// accepts it (the console compresses /api/monitor answers; a client must
// also cope with plain ones, which it gets when it does not ask).
func (s *Simulator) writeBody(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	// The Date header is the console's clock (the simulated one), as a
	// real server's is its host's; none with Readings.NoDate (a nil value
	// keeps net/http from adding its own).
	if ms, ok := s.dateHeader(s.readings()); ok {
		h.Set("Date", time.UnixMilli(ms).UTC().Format(http.TimeFormat))
	} else {
		h["Date"] = nil
	}
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		zw := gzipPool.Get().(*gzip.Writer)
		var buf bytes.Buffer
		buf.Grow(len(body)/4 + 64)
		zw.Reset(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		gzipPool.Put(zw)
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
		w.WriteHeader(status)
		_, _ = w.Write(buf.Bytes())
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *Simulator) writeJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	s.writeBody(w, r, status, "application/json", body)
}

func (s *Simulator) writeMessage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.writeJSON(w, r, status, appendMessage(nil, msg))
}
