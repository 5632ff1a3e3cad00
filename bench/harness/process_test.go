package harness

import (
	"strings"
	"testing"
)

// The address is read from the line as it goes by, whatever the writes'
// boundaries, even when the tail kept for error messages has dropped it.
func TestListenWatch(t *testing.T) {
	log := `time=2026-01-02T03:04:05Z level=INFO msg="Starting json_exporter"` + "\n" +
		`time=2026-01-02T03:04:05Z level=INFO msg="Start listening for connections" address=127.0.0.1:0` + "\n" +
		`time=2026-01-02T03:04:05Z level=INFO source=tls_config.go:347 msg="Listening on" address=127.0.0.1:40123` + "\n" +
		strings.Repeat("x", 2*tailBytes) + "\n"
	for _, size := range []int{1, 7, 64, len(log)} {
		w := newListenWatch(&tailBuffer{})
		for rest := log; rest != ""; {
			n := min(size, len(rest))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		select {
		case <-w.found:
		default:
			t.Fatalf("writes of %d bytes: no address found", size)
		}
		if got := w.address(); got != "127.0.0.1:40123" {
			t.Errorf("writes of %d bytes: %q", size, got)
		}
		if strings.Contains(w.out.String(), "Listening on") {
			t.Errorf("the tail kept the line: the test proves nothing")
		}
	}
}
