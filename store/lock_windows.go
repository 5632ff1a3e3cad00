//go:build windows

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockSupported: LockFileEx, Windows' lock of a byte range. The system
// releases it when the process ends, however it ends (Windows documents
// that the release may take a moment after the process is gone).
const lockSupported = true

// lockedByteHigh places the locked byte at 2^62, far past the holder's
// line: a Windows lock is mandatory, and a lock over the line would keep
// another process from reading who holds it.
const lockedByteHigh = 1 << 30

// tryLock takes an exclusive lock of one byte of f without waiting: false
// when another handle holds it.
func tryLock(f *os.File) (bool, error) {
	ol := &windows.Overlapped{OffsetHigh: lockedByteHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: err}
	}
	return true, nil
}
