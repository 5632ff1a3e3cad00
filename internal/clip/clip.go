// Package clip bounds text taken from a console (comments, versions) to a
// number of bytes without cutting a character in two: the one way the
// exporter shortens such text, wherever it keeps or writes it.
package clip

import (
	"strings"
	"unicode/utf8"
)

// Prefix returns s cut to at most n bytes at a rune boundary (s itself when
// it fits).
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Text makes s valid UTF-8 (U+FFFD for bad bytes), trims its surrounding
// blanks and cuts it to at most n bytes (Prefix).
func Text(s string, n int) string {
	return Prefix(strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD")), n)
}
