package apiclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
)

// HTTP/1.1 requests written and answers read by the direct transport,
// leaner than net/http's Request.Write and ReadResponse for the requests
// the client makes (a GET or a POST with a body of known length) and the
// answers a console sends: those two were an eighth of a poll's CPU at
// 2000 nodes (the header map of textproto, a sorted copy of the request's
// headers, fmt), for what comes down to a few lines. A request this does
// not cover is written by net/http (writeRequest); an answer is read as
// net/http reads it (readResponse's tests compare the two on any input).

// writeRequest writes req as net/http's Request.Write does for the
// requests of the client: the request line, Host, the headers (values with
// line breaks made spaces, names not valid left out, as net/http does),
// Content-Length and the body. Any other request goes to Request.Write.
func writeRequest(w *bufio.Writer, req *http.Request) error {
	body := req.Body != nil && req.Body != http.NoBody
	if req.ContentLength < 0 || body && req.ContentLength == 0 || len(req.TransferEncoding) > 0 ||
		len(req.Trailer) > 0 || req.Close || req.URL == nil || req.URL.Opaque != "" || req.Header.Get("Connection") != "" {
		return req.Write(w)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	uri := req.URL.RequestURI()
	if !validHostHeader(host) || strings.ContainsAny(uri, " \r\n") || req.Method == "" || strings.ContainsAny(req.Method, " \r\n") {
		return req.Write(w) // which refuses them, or writes them as it would
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(uri)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue // as net/http: its own
		}
		if !validFieldName(k) {
			continue
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			writeFieldValue(w, v)
			w.WriteString("\r\n")
		}
	}
	if req.ContentLength > 0 || methodWantsLength(req.Method) {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(req.ContentLength, 10))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	if body {
		n, err := io.Copy(w, io.LimitReader(req.Body, req.ContentLength))
		req.Body.Close()
		if err != nil {
			return err
		}
		if n != req.ContentLength {
			return fmt.Errorf("http: ContentLength=%d with Body length %d", req.ContentLength, n)
		}
	}
	return nil
}

// methodWantsLength tells the methods whose request carries a
// Content-Length even when empty, as net/http writes them.
func methodWantsLength(m string) bool { return m == "POST" || m == "PUT" || m == "PATCH" }

// writeFieldValue writes v with its line breaks made spaces and its
// surrounding blanks trimmed, as net/http's Header.Write.
func writeFieldValue(w *bufio.Writer, v string) {
	v = textproto.TrimString(v)
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '\r' || c == '\n' {
			w.WriteByte(' ')
		} else {
			w.WriteByte(c)
		}
	}
}

// validFieldName tells a header name of token characters (RFC 7230).
func validFieldName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !validHeaderFieldByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// validHostHeader refuses a Host with a control byte or a space, which
// net/http's Request.Write refuses too.
func validHostHeader(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// readResponse reads an answer's head from r and frames its body, as
// net/http's ReadResponse does. A head that is whole in r's buffer and of
// the plain kind consoles send (HTTP/1.1 or 1.0, each header a token name,
// a colon and a value of visible bytes, lines ended by CRLF, at most one
// Content-Length, no Transfer-Encoding but "chunked") is parsed here;
// anything else is left to ReadResponse, which reads it as it always did
// (FuzzReadResponse compares the two on any input).
func readResponse(r *bufio.Reader, req *http.Request) (*http.Response, error) {
	buf, _ := r.Peek(r.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return http.ReadResponse(r, req)
	}
	resp, ok := parseHead(buf[:end+2], req)
	if !ok {
		return http.ReadResponse(r, req)
	}
	_, _ = r.Discard(end + 4)
	frameBody(resp, r, req)
	return resp, nil
}

// parseHead parses a plain head (readResponse), each line ended by CRLF;
// false for any other.
func parseHead(head []byte, req *http.Request) (*http.Response, bool) {
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	var major, minor int
	switch {
	case bytes.HasPrefix(line, []byte("HTTP/1.1 ")):
		major, minor = 1, 1
	case bytes.HasPrefix(line, []byte("HTTP/1.0 ")):
		major, minor = 1, 0
	default:
		return nil, false
	}
	status := line[len("HTTP/1.1 "):]
	if len(status) < 3 || len(status) > 3 && status[3] != ' ' {
		return nil, false
	}
	code := 0
	for _, c := range status[:3] {
		if c < '0' || c > '9' {
			return nil, false
		}
		code = code*10 + int(c-'0')
	}
	for _, c := range status {
		if !validHeaderValueByte(c) {
			return nil, false
		}
	}
	resp := &http.Response{Request: req, StatusCode: code, ProtoMajor: major, ProtoMinor: minor,
		Status: string(status), Header: make(http.Header, 8)}
	if major == 1 && minor == 1 {
		resp.Proto = "HTTP/1.1"
	} else {
		resp.Proto = "HTTP/1.0"
	}
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(k) == 0 {
			return nil, false
		}
		for _, c := range k {
			if !validHeaderFieldByte(c) {
				return nil, false
			}
		}
		for _, c := range v {
			if !validHeaderValueByte(c) {
				return nil, false
			}
		}
		key := canonicalKey(k)
		resp.Header[key] = append(resp.Header[key], string(bytes.Trim(v, " \t")))
	}
	h := resp.Header
	if te, ok := h["Transfer-Encoding"]; ok && (len(te) != 1 || te[0] != "chunked" || minor == 0) {
		return nil, false // (net/http ignores it in HTTP/1.0)
	}
	if cl, ok := h["Content-Length"]; ok {
		if len(cl) != 1 || cl[0] == "" || len(cl[0]) > 18 {
			return nil, false
		}
		for i := 0; i < len(cl[0]); i++ {
			if c := cl[0][i]; c < '0' || c > '9' {
				return nil, false
			}
		}
	}
	if _, chunked := h["Transfer-Encoding"]; chunked {
		if _, ok := h["Content-Length"]; ok {
			return nil, false
		}
	}
	if h["Pragma"] != nil || h["Trailer"] != nil {
		return nil, false // net/http adds a Cache-Control for a no-cache one, takes the Trailer out
	}
	return resp, true
}

// canonicalKey returns a valid header name in canonical form, without
// allocating for the names a console sends.
func canonicalKey(k []byte) string {
	switch string(k) { // no allocation: a switch on a conversion
	case "Content-Type":
		return "Content-Type"
	case "Content-Length":
		return "Content-Length"
	case "Content-Encoding":
		return "Content-Encoding"
	case "Date":
		return "Date"
	case "Vary":
		return "Vary"
	case "Connection":
		return "Connection"
	case "Transfer-Encoding":
		return "Transfer-Encoding"
	case "Server":
		return "Server"
	case "Keep-Alive":
		return "Keep-Alive"
	}
	return textproto.CanonicalMIMEHeaderKey(string(k))
}

// validHeaderFieldByte tells a byte of a token (RFC 7230), as textproto.
func validHeaderFieldByte(c byte) bool {
	return c > ' ' && c < 0x7f && strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) < 0
}

// validHeaderValueByte tells a visible byte, a space or a tab.
func validHeaderValueByte(c byte) bool {
	return c >= ' ' && c < 0x7f || c == '\t'
}

// frameBody sets the body of a plain head (parseHead), its length and
// whether the connection closes after it, as net/http's readTransfer.
func frameBody(resp *http.Response, r *bufio.Reader, req *http.Request) {
	h := resp.Header
	resp.Close = shouldClose(resp.ProtoMajor, resp.ProtoMinor, h)
	_, chunked := h["Transfer-Encoding"]
	if chunked {
		delete(h, "Transfer-Encoding")
		resp.TransferEncoding = []string{"chunked"}
	}
	length := int64(-1)
	if cl := h["Content-Length"]; len(cl) == 1 {
		length, _ = strconv.ParseInt(cl[0], 10, 64) // digits only (parseHead)
	}
	switch {
	case req != nil && req.Method == http.MethodHead || resp.StatusCode/100 == 1 ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		resp.ContentLength = 0
		if req != nil && req.Method == http.MethodHead {
			resp.ContentLength = length
		}
		resp.Body = http.NoBody
	case chunked:
		resp.ContentLength = -1
		resp.Body = &chunkedBody{r: r, cr: httputil.NewChunkedReader(r)}
	case length == 0:
		resp.ContentLength = 0
		resp.Body = http.NoBody
	case length > 0:
		resp.ContentLength = length
		resp.Body = &lengthBody{r: r, left: length}
	default:
		// Up to the connection's end: it cannot be used again.
		resp.ContentLength = -1
		resp.Close = true
		resp.Body = io.NopCloser(r)
	}
}

// shouldClose tells whether the connection closes after this answer, as
// net/http: HTTP/1.0 without keep-alive, or a "close" token in
// Connection (then taken out of the header, for HTTP/1.1).
func shouldClose(major, minor int, h http.Header) bool {
	conn := h["Connection"]
	hasClose := containsToken(conn, "close")
	if major == 1 && minor == 0 {
		return hasClose || !containsToken(conn, "keep-alive")
	}
	if hasClose {
		delete(h, "Connection")
	}
	return hasClose
}

// containsToken tells whether a comma-separated value of vs holds token,
// in any case.
func containsToken(vs []string, token string) bool {
	for _, v := range vs {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.Trim(t, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// lengthBody is a body of a known length: a connection that ends before
// it is an unexpected end.
type lengthBody struct {
	r    *bufio.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		err = io.EOF
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }

// chunkedBody is a chunked body; after its last chunk it reads the
// trailer as net/http does (an empty line, or header lines up to one), so
// that the next answer on the connection starts where it should.
type chunkedBody struct {
	r    *bufio.Reader
	cr   io.Reader
	done bool
	err  error
}

var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.cr.Read(p)
	if err == io.EOF {
		b.done, b.err = true, b.readTrailer()
		return n, b.err
	}
	if err != nil {
		b.done, b.err = true, err
	}
	return n, err
}

func (b *chunkedBody) readTrailer() error {
	buf, err := b.r.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		_, _ = b.r.Discard(2)
		return io.EOF
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	if !seeUpcomingDoubleCRLF(b.r) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	if _, err := textproto.NewReader(b.r).ReadMIMEHeader(); err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	return io.EOF
}

func (b *chunkedBody) Close() error { return nil }

// seeUpcomingDoubleCRLF tells whether the trailer's end is in r's buffer,
// as net/http checks before reading a trailer.
func seeUpcomingDoubleCRLF(r *bufio.Reader) bool {
	for n := 4; ; n++ {
		buf, err := r.Peek(n)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
