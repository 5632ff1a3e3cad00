package store

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
)

// LockSuffix names the lock file beside the manifest: PATH.lock.
//
// The lock is the kernel's (flock, or the platform's equivalent: lock_*.go)
// on that file, held from before Open reads anything until Close or the
// end of the process, however it ends: a crash leaves no lock behind, and
// a restart takes it at once. The file itself stays (removing it on Close
// would let a starting process lock a name that another is about to
// replace); one whose lock nobody holds blocks nothing. It holds the
// holder's pid and host, written once the lock is taken, for the message
// of a process that finds it held.
const LockSuffix = ".lock"

// maxHolderBytes bounds what is read of a lock file: a pid and a host name.
const maxHolderBytes = 4096

// Holder is the process that holds a state file's lock, as it wrote itself
// in the lock file.
type Holder struct {
	PID  int    `json:"pid"`
	Host string `json:"host,omitempty"` // os.Hostname ("": unknown)
}

func (h Holder) String() string {
	s := "pid " + strconv.Itoa(h.PID)
	if h.Host != "" {
		s += " on host " + h.Host
	}
	return s
}

// InUseError is Open's error when another process holds the state file's
// lock: two processes on one state file would each rewrite the manifest
// without the nodes the other counts and remove the slot files it writes.
type InUseError struct {
	Path   string  // the manifest (--events.state-file)
	Lock   string  // the lock file
	Holder *Holder // nil: not known (the lock file holds nothing readable yet)
}

func (e *InUseError) Error() string {
	by := "another process (holder not known)"
	if e.Holder != nil {
		by = "another process, " + e.Holder.String()
	}
	return fmt.Sprintf("state file %q is in use by %s, which holds the lock on %q: one process per state file; stop that process, or give this one a state file of its own",
		e.Path, by, e.Lock)
}

// fileLock is a held lock on a state file's lock file.
type fileLock struct {
	f *os.File
}

// lockPath takes the lock of the state file at path, or returns an
// *InUseError naming its holder. With no lock on this platform
// (lockSupported), it returns a fileLock that excludes nobody.
func lockPath(path string) (*fileLock, error) {
	lp := path + LockSuffix
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state file %q: lock file %q: %w", path, lp, fserr.Bare(err))
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("state file %q: lock file %q: %w", path, lp, errNotRegular)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("state file %q: cannot lock %q (does the file system offer locks? docs/state.md): %w", path, lp, fserr.Bare(err))
	}
	if !held {
		h := readHolder(f)
		f.Close()
		return nil, &InUseError{Path: path, Lock: lp, Holder: h}
	}
	// Ours: say who holds it. Truncated only now, never before the lock is
	// taken, which would erase the holder's line for a process that then
	// finds the lock held.
	host, _ := os.Hostname()
	line, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host})
	// Assigned to the function's err, not one declared in the if: a failed
	// truncation or write must reach the check below.
	if err = f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(line, '\n'), 0)
	}
	if err != nil {
		f.Close() // releases the lock
		return nil, fmt.Errorf("state file %q: writing the lock file %q: %w", path, lp, fserr.Bare(err))
	}
	return &fileLock{f: f}, nil
}

// readHolder reads the holder a lock file names; nil when it names none
// (the holder has just taken the lock and not written yet, or the file is
// not one of ours).
func readHolder(f *os.File) *Holder {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxHolderBytes))
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.PID <= 0 {
		return nil
	}
	return &h
}

// release releases the lock (closing the file does). The file stays.
func (l *fileLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
