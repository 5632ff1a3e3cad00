package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefixNeverCutsARune(t *testing.T) {
	s := strings.Repeat("é", 10) // two bytes each
	for n := 0; n <= len(s)+1; n++ {
		got := Prefix(s, n)
		if len(got) > n || !utf8.ValidString(got) || !strings.HasPrefix(s, got) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, got)
		}
		if want := min(n, len(s)) / 2 * 2; len(got) != want {
			t.Fatalf("Prefix(%q, %d) kept %d bytes, want %d", s, n, len(got), want)
		}
	}
}

func TestTextMakesValidTrimmedBoundedText(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"  table_1 \n", 128, "table_1"},
		{"a\xffb", 128, "a\uFFFDb"},
		{"  abcdef  ", 3, "abc"},
		{"ab€", 4, "ab"}, // € is three bytes: not cut in two
	} {
		if got := Text(c.in, c.n); got != c.want {
			t.Errorf("Text(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
