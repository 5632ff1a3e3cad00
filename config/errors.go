package config

import (
	"fmt"
	"strings"
)

// Error is a configuration that cannot be used. Problems holds one line per
// problem; none of them holds a secret.
type Error struct {
	File     string // path of the file, "" when parsed from memory
	Problems []string
}

func (e *Error) Error() string {
	return e.prefix() + strings.Join(e.Problems, "; ")
}

// Lines returns one self-contained line per problem, for --config.check.
func (e *Error) Lines() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = e.prefix() + p
	}
	return out
}

func (e *Error) prefix() string {
	if e.File == "" {
		return "config: "
	}
	return fmt.Sprintf("config file %q: ", e.File)
}
