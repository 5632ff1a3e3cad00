package eventlog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/event"
	"github.com/indexima-exporter/indexima_exporter/poller"
	"github.com/indexima-exporter/indexima_exporter/tracker"
)

// The log's own encoder writes, byte for byte, what encoding/json writes
// for the event's Line (HTML unescaped) and its newline, whatever the
// strings hold: control characters, quotes, invalid UTF-8, U+2028, a
// comment longer than MaxComment.
func FuzzAppendLine(f *testing.F) {
	f.Add("prod", "core-1", "c1:9999", "TABLE_LOADED", int64(1773144020007), int64(1500), true, "sales", 1)
	f.Add("", "n", "n:1", "NODE_DOWN", int64(-5), int64(0), false, "3", 2)
	f.Add("p\"q", "a\\b", "\x00\x1f\x7f", "NODE_DOWN", int64(0), int64(-1), true, "", 1)
	f.Add("<&>", "\u2028\u2029", "\xff\xfe", "X", int64(1<<62), int64(1<<40), true, "é\n\t\b\f\r😀\xed\xa0\x80", 7)
	names := func(cluster, number string) (string, bool) {
		if number == "" || number == "3" {
			return "", false
		}
		return cluster + "/" + number, true
	}
	f.Fuzz(func(t *testing.T, cluster, name, target, typ string, date, dur int64, hasDur bool, comment string, nth int) {
		n := poller.NodeRef{Cluster: cluster, Name: name, Target: target}
		c := tracker.Counted{Event: event.Event{Type: typ, Date: date, Duration: dur, HasDuration: hasDur, Comment: comment}, Nth: nth}
		if len(comment)%3 == 0 {
			c.Comment = comment + string(bytes.Repeat([]byte("ü"), MaxComment/2)) // a comment cut at MaxComment
		}
		for _, nm := range []DownNodeNamer{nil, names} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(LineOf(n, c, nm)); err != nil {
				t.Fatal(err)
			}
			got, _ := appendLine([]byte("previous line\n"), nil, n, c, nm)
			if !bytes.Equal(got, append([]byte("previous line\n"), want.Bytes()...)) {
				t.Fatalf("appendLine wrote\n%q\nencoding/json writes\n%q", got, want.Bytes())
			}
		}
	})
}
