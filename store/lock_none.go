//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || windows)

package store

import "os"

// lockSupported: no file lock here (none of the release platforms: AIX,
// Solaris, Plan 9, WebAssembly). Open then excludes nobody and says so
// (Opened.Unlocked); one process per state file is the operator's to keep
// (docs/state.md).
const lockSupported = false

func tryLock(*os.File) (bool, error) { return true, nil }
