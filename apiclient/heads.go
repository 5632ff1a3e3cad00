package apiclient

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// What the direct transport reads of an answer's head is bounded, as
// net/http's transport bounds it (MaxResponseHeaderBytes, 1xx answers), so
// that a broken or hostile console cannot make a call hold more than that.
const (
	// maxHeadBytes bounds the heads of an answer, its interim (1xx)
	// answers' included. A console's head is a few hundred bytes, and the
	// proxies put in front of consoles refuse larger ones from upstream
	// (nginx's proxy_buffer_size is 4 or 8 KiB by default); 16 KiB leaves
	// room for a single-sign-on proxy's cookies. net/http's default, 10
	// MiB, is for any server; here it would be held by every call under way
	// (--scrape.concurrency of them).
	maxHeadBytes = 16 << 10
	// maxInterimAnswers bounds the 1xx answers before the final one: a
	// console sends none (the client sends no Expect), a proxy a 103 Early
	// Hints at most.
	maxInterimAnswers = 5
	// maxHeaderFields bounds the fields of a head: a console sends about
	// ten, a proxy adds a few.
	maxHeaderFields = 100
)

// headLimitError is an answer whose head went over one of the bounds.
type headLimitError struct{ what string }

func (e *headLimitError) Error() string {
	return "the console's answer has " + e.what + " (a console's answer head is a few hundred bytes)"
}

var (
	errHeadTooLarge   = &headLimitError{what: fmt.Sprintf("a head larger than %d KiB", maxHeadBytes>>10)}
	errTooManyInterim = &headLimitError{what: fmt.Sprintf("more than %d interim (1xx) answers before its final one", maxInterimAnswers)}
)

func tooManyFields(n int) *headLimitError {
	return &headLimitError{what: fmt.Sprintf("%d header fields, more than %d", n, maxHeaderFields)}
}

// headLimit reads a connection, failing with errHeadTooLarge once left
// bytes have been read. What the buffered reader above it reads ahead of
// the head (the start of the body) counts too, as in net/http.
type headLimit struct {
	conn net.Conn
	left int64
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.left <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.conn.Read(p)
	h.left -= int64(n)
	return n, err
}

// readHeads reads the answer to req from r with net/http's ReadResponse,
// skipping interim answers (100 Continue, 103 Early Hints), within the
// bounds above; in is the connection beneath r, bounded by maxHeadBytes
// for all the heads together.
func readHeads(r *bufio.Reader, req *http.Request, in *headLimit) (*http.Response, error) {
	for interim := 0; ; interim++ {
		resp, err := http.ReadResponse(r, req)
		if err != nil {
			if in.left <= 0 || errors.Is(err, errHeadTooLarge) {
				return nil, errHeadTooLarge
			}
			return nil, err
		}
		if fields := headerFields(resp.Header); fields > maxHeaderFields {
			return nil, tooManyFields(fields)
		}
		final := resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols
		if final {
			return resp, nil
		}
		if interim == maxInterimAnswers {
			return nil, errTooManyInterim
		}
	}
}

// headerFields counts the fields of h, a name given twice counting twice.
func headerFields(h http.Header) int {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	return n
}
