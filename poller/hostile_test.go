package poller

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/textproto"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/indexima-exporter/indexima_exporter/apiclient"
	"github.com/indexima-exporter/indexima_exporter/internal/simtest"
)

// hostileConsole answers every request on loopback with what answer
// writes; answer returns when it is done or the exporter has gone away.
func hostileConsole(t *testing.T, answer func(w *bufio.Writer) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				// A test that fails must not leave a console writing.
				_ = c.SetDeadline(time.Now().Add(time.Minute))
				r := textproto.NewReader(bufio.NewReader(c))
				if _, err := r.ReadLine(); err != nil {
					return
				}
				if _, err := r.ReadMIMEHeader(); err != nil {
					return
				}
				w := bufio.NewWriterSize(c, 32<<10)
				if answer(w) == nil {
					_ = w.Flush()
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// heapAllocated is what the process has allocated on the heap since it
// started (runtime/metrics): its growth over a poll bounds what the poll
// held at any moment, whatever the collections did meanwhile.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A broken or hostile console's answer head is read within the client's
// bounds: each ends as one failed poll, the node's, as a malformed answer
// naming the bound, without waiting for the call's timeout, and the poll
// allocates less than 16 MiB however much the console sends.
func TestHostileHeadsEndAsOneFailedPoll(t *testing.T) {
	const gib = 1 << 30
	endless := func(w *bufio.Writer) error {
		_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Endless: ")
		chunk := []byte(strings.Repeat("a", 32<<10))
		for sent := 0; sent < gib; sent += len(chunk) { // a gibibyte at most
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	}
	continues := func(n int) func(w *bufio.Writer) error {
		return func(w *bufio.Writer) error {
			for range n {
				_, _ = w.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
			}
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"count\": 1}")
			return nil
		}
	}
	fields := func(n int) func(w *bufio.Writer) error {
		return func(w *bufio.Writer) error {
			_, _ = w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
			for i := range n {
				fmt.Fprintf(w, "X-F%d: v\r\n", i)
			}
			_, _ = w.WriteString("Content-Length: 12\r\n\r\n{\"count\": 1}")
			return nil
		}
	}
	for _, tc := range []struct {
		name   string
		answer func(w *bufio.Writer) error
		reason string // in the poll's error
	}{
		{"endless header line", endless, "a head larger than 16 KiB"},
		{"a thousand 100 Continue", continues(1000), "more than 5 interim (1xx) answers"},
		{"a header of 100,000 fields", fields(100_000), "a head larger than 16 KiB"},
		{"a header of 150 short fields", fields(150), "header fields, more than 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := hostileConsole(t, tc.answer)
			// No user: no login, the first call is the node's.
			client, err := apiclient.New(apiclient.Config{URL: url, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			p := New(Options{Logger: simtest.Logger(t)})
			p.SetClusters([]Cluster{{Client: client, Nodes: []Node{{Name: "core-1", Target: apiclient.Node{Host: "core-1", Port: 9999}}}}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			before := heapAllocated()
			res := p.PollNodes(ctx, p.Current().Clusters[0].Nodes, InfoCalls{})
			grew := heapAllocated() - before
			if len(res) != 1 || res[0].Err == nil {
				t.Fatalf("the poll succeeded: %+v", res)
			}
			if res[0].Reason != ReasonMalformed || !strings.Contains(res[0].Err.Error(), tc.reason) {
				t.Errorf("reason %q, error %q; want %q naming %q", res[0].Reason, res[0].Err, ReasonMalformed, tc.reason)
			}
			if grew >= 16<<20 {
				t.Errorf("the poll allocated %d MiB, want under 16", grew>>20)
			}
			t.Logf("%s: %v (allocated %d KiB)", tc.name, res[0].Err, grew>>10)
		})
	}
}
