package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
)

// writeAtomic replaces path's content with data: a temporary file in the
// same directory (a rename across file systems would not be atomic),
// fsync, rename, fsync of the directory. On error the old file is left as
// it was. For the manifest and the migrated file, written seldom; node
// states are written in place (Store.save).
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("state file %q: creating a temporary file in %q: %w", path, dir, fserr.Bare(err))
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("state file %q: writing: %w", path, fserr.Bare(err))
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("state file %q: syncing: %w", path, fserr.Bare(err))
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("state file %q: closing: %w", path, fserr.Bare(err))
	}
	// CreateTemp makes the file 0600, which suits a file only the exporter
	// reads; keep it that way.
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("state file %q: renaming the temporary file into place: %w", path, fserr.Bare(err))
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename or a new file's name durable. Some file systems
// refuse to sync a directory; the rename is still atomic there, so the
// error is ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// readBounded reads a regular file of at most limit bytes; false and no
// error when it does not exist.
func readBounded(path string, limit int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state file %q: %w", path, fserr.Bare(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("state file %q: %w", path, fserr.Bare(err))
	}
	if !st.Mode().IsRegular() {
		return nil, false, fmt.Errorf("state file %q: %w", path, errNotRegular)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, fmt.Errorf("state file %q: reading: %w", path, fserr.Bare(err))
	}
	if int64(len(data)) > limit {
		return nil, false, fmt.Errorf("state file %q: larger than %d bytes, not a state file of this exporter", path, limit)
	}
	return data, true, nil
}
