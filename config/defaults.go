package config

import "time"

// Defaults, set in this one place.
const (
	// DefaultNodePort is a node's monitoring port (spec section 8).
	DefaultNodePort = 9999
	// DefaultTimeout bounds each call to the console, login included.
	DefaultTimeout = 10 * time.Second
	// PasswordEnv is read when a console has a username but neither
	// password nor password_file.
	PasswordEnv = "INDEXIMA_PASSWORD"
	// maxPasswordFileBytes bounds what we read from a password file, so a
	// wrong path (a device, a big file) cannot hang or bloat the exporter.
	maxPasswordFileBytes = 64 << 10
)
