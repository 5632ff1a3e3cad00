package scripts

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// The table of hand-written replacements in docs/performance.md gives, for
// each replacement kept, the files it is and their lines ("515 (484 not
// blank)"): the size a maintainer weighs against what it earns. Each kept
// row's files exist and its counts are theirs today.
func TestReplacementsTableCountsTheLinesKept(t *testing.T) {
	root := testkit.RepoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Hand-written replacements")
	if start < 0 {
		t.Fatal("docs/performance.md has no section \"Hand-written replacements\"")
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	goFile := regexp.MustCompile("`([^`]+\\.go)`")
	counts := regexp.MustCompile(`^([\d,]+)(?: \(([\d,]+) not blank)?`)
	kept := 0
	for _, row := range strings.Split(section, "\n") {
		cols := strings.Split(strings.Trim(row, "| "), " | ")
		if !strings.HasPrefix(row, "| ") || len(cols) < 5 || !strings.HasPrefix(cols[len(cols)-1], "**kept**") {
			continue
		}
		kept++
		// A bare name is in the folder of the path named before it.
		dir, lines, notBlank := "", 0, 0
		for _, m := range goFile.FindAllStringSubmatch(cols[0], -1) {
			f := m[1]
			if strings.Contains(f, "/") {
				dir = path.Dir(f)
			} else {
				f = path.Join(dir, f)
			}
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
			if err != nil {
				t.Errorf("%q: %v", cols[0], err)
				continue
			}
			for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				lines++
				if strings.TrimSpace(l) != "" {
					notBlank++
				}
			}
		}
		m := counts.FindStringSubmatch(cols[1])
		if m == nil || lines == 0 {
			t.Errorf("row %q: no line count (%q) or no .go file named", cols[0], cols[1])
			continue
		}
		if n := number(t, m[1]); n != lines {
			t.Errorf("row %q says %d lines; its files have %d", cols[0], n, lines)
		}
		if m[2] != "" && number(t, m[2]) != notBlank {
			t.Errorf("row %q says %s not blank; its files have %d", cols[0], m[2], notBlank)
		}
	}
	if kept < 5 {
		t.Fatalf("found %d kept rows in the replacements table; the test reads it wrongly", kept)
	}
}

func number(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
