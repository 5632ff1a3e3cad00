//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockSupported: flock(2), the lock Prometheus's TSDB takes on its
// directory. It belongs to the open file, so the kernel releases it when
// the process ends, however it ends. On NFS, Linux makes it a lock of the
// whole file on the server (docs/state.md).
const lockSupported = true

// tryLock takes an exclusive flock on f without waiting: false when
// another open file holds it (another process, or another Open of this
// process).
func tryLock(f *os.File) (bool, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := c.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB); ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(ferr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	if ferr != nil {
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: ferr}
	}
	return true, nil
}
