// Package statefile saves and loads a small JSON document (the exporter's
// event cursors) so that a crash at any instant leaves either the previous
// file or the new one, never a mix: the new content is written to a
// temporary file in the same directory, synced, then renamed over the old
// one, and the directory is synced so the rename itself survives a power cut.
package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxBytes bounds what Load reads: a state file holds bounded per-node
// state, so anything larger is not ours (a wrong path) and is refused
// rather than read into memory.
const MaxBytes = 64 << 20

// Save writes v as JSON to path atomically.
func Save(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state file %q: encoding: %w", path, err)
	}
	return WriteAtomic(path, data)
}

// WriteWith replaces path's content with what write produces (for
// encoders that take an io.Writer, such as collector.Exporter.WriteState).
// Nothing is written to path unless write succeeds.
func WriteWith(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("state file %q: encoding: %w", path, err)
	}
	return WriteAtomic(path, buf.Bytes())
}

// ReadWith hands the content of path to read (for decoders that take an
// io.Reader, such as collector.Exporter.ReadState). It reports false, and
// does not call read, when the file does not exist: a first start.
func ReadWith(path string, read func(io.Reader) error) (bool, error) {
	data, ok, err := readBounded(path)
	if !ok || err != nil {
		return false, err
	}
	if err := read(bytes.NewReader(data)); err != nil {
		return false, fmt.Errorf("state file %q: %w (delete it to start with fresh baselines)", path, err)
	}
	return true, nil
}

// WriteAtomic replaces path's content with data: temporary file in the same
// directory (a rename across file systems would not be atomic), fsync,
// rename, fsync of the directory. On error the old file is left as it was.
func WriteAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("state file %q: creating a temporary file in %q: %w", path, dir, unwrapPath(err))
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("state file %q: writing: %w", path, unwrapPath(err))
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("state file %q: syncing: %w", path, unwrapPath(err))
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("state file %q: closing: %w", path, unwrapPath(err))
	}
	// CreateTemp makes the file 0600, which suits a file only the exporter
	// reads; keep it that way.
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("state file %q: renaming the temporary file into place: %w", path, unwrapPath(err))
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable. Some file systems refuse to sync a
// directory; the rename is still atomic there, so the error is ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// Load reads the JSON document at path into v. It reports false (and no
// error) when the file does not exist: a first start.
func Load(path string, v any) (bool, error) {
	data, ok, err := readBounded(path)
	if !ok || err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("state file %q: not valid JSON (delete it to start with fresh baselines): %w", path, err)
	}
	return true, nil
}

// readBounded reads a regular file of at most MaxBytes; false and no error
// when it does not exist.
func readBounded(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state file %q: %w", path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("state file %q: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, false, fmt.Errorf("state file %q: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("state file %q: reading: %w", path, unwrapPath(err))
	}
	if len(data) > MaxBytes {
		return nil, false, fmt.Errorf("state file %q: larger than %d bytes, not a state file of this exporter", path, MaxBytes)
	}
	return data, true, nil
}

// unwrapPath drops the *os.PathError wrapper, whose path our messages
// already name.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
