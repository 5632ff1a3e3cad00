// Package fserr strips the path from file-system errors, for messages that
// name the path already (the configuration, the state store and its lock,
// the event log).
package fserr

import (
	"errors"
	"os"
)

// Bare returns the error inside an *os.PathError or *os.LinkError found in
// err's chain (its path is dropped), or err itself.
func Bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
