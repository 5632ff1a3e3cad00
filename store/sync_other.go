//go:build !linux

package store

import "os"

// datasync flushes a file's data (fsync where fdatasync is not offered).
func datasync(f *os.File) error { return f.Sync() }
