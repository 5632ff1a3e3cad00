package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
)

// password picks the password in force. password and password_file exclude
// each other; the environment variable is the fallback when a username is
// given with neither. The file is read now, at every load, so a rotated
// password is picked up by a reload. Nothing of its content goes in errors.
func (v *validator) password(prefix string, c *consoleYAML) (promconfig.Secret, string) {
	hasPassword, hasFile := c.Password != "", c.PasswordFile != ""
	switch {
	case hasPassword && hasFile:
		v.addf(prefix+"password", "give password or password_file, not both")
		return "", ""
	case (hasPassword || hasFile) && c.Username == "":
		v.addf(prefix+"username", "missing, but a password is configured")
		return "", ""
	case hasPassword:
		return c.Password, "password"
	case hasFile:
		path := promconfig.JoinDir(v.dir, c.PasswordFile)
		p, err := readPasswordFile(path)
		if err != nil {
			v.addf(prefix+"password_file", "%q: %v", path, err)
			return "", ""
		}
		return promconfig.Secret(p), "password_file " + path
	case c.Username == "":
		return "", "" // authentication disabled on the console
	}
	if p := os.Getenv(PasswordEnv); p != "" {
		return promconfig.Secret(p), "env " + PasswordEnv
	}
	v.addf(prefix+"username", "%q has no password: set password_file (or password, or env %s)", c.Username, PasswordEnv)
	return "", ""
}

// readPasswordFile reads a password file: a regular file, bounded, whose
// surrounding white space (the trailing newline of editors) is dropped.
func readPasswordFile(path string) (string, error) {
	if err := checkReadable(path); err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", openProblem(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFileBytes+1))
	if err != nil {
		return "", openProblem(err)
	}
	if len(b) > maxPasswordFileBytes {
		return "", fmt.Errorf("larger than %d bytes, not a password file", maxPasswordFileBytes)
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return "", errors.New("the file is empty")
	}
	return p, nil
}

// checkReadable refuses what is not a regular file we can open, without
// reading it (a device or FIFO would block).
func checkReadable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return openProblem(err)
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return openProblem(err)
	}
	return f.Close()
}

func openProblem(err error) error {
	switch {
	case os.IsNotExist(err):
		return errors.New("no such file")
	case os.IsPermission(err):
		return errors.New("permission denied")
	}
	return fserr.Bare(err)
}
