package fserr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestBareDropsThePath(t *testing.T) {
	dir := t.TempDir()
	_, openErr := os.Open(filepath.Join(dir, "missing"))
	linkErr := os.Rename(filepath.Join(dir, "missing"), filepath.Join(dir, "other"))
	plain := errors.New("plain")
	for _, c := range []struct {
		err  error
		want error
	}{
		{openErr, syscall.ENOENT},
		{fmt.Errorf("wrapped: %w", openErr), syscall.ENOENT},
		{linkErr, syscall.ENOENT},
		{plain, plain},
	} {
		got := Bare(c.err)
		if got != c.want {
			t.Errorf("Bare(%v) = %v, want %v", c.err, got, c.want)
		}
		if strings.Contains(got.Error(), dir) {
			t.Errorf("Bare(%v) still names the path", c.err)
		}
	}
}
