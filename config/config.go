// Package config reads the exporter's YAML configuration file. It is the
// only package that knows YAML: it decodes strictly, sets the defaults in
// one place (defaults.go), validates with errors that name the field, reads
// the password file, and hands out plain, checked values.
package config

import (
	"os"
	"path/filepath"
	"sort"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/indexima-exporter/indexima_exporter/internal/fserr"
)

// Config is a loaded and validated configuration.
type Config struct {
	// Clusters in name order. The single form (top-level console and nodes)
	// gives one cluster whose Name is "".
	Clusters []Cluster `yaml:"clusters"`
}

// Cluster is one console and the nodes polled through it.
type Cluster struct {
	Name    string  `yaml:"name,omitempty"` // module name; "" in the single form
	Console Console `yaml:"console"`
	Nodes   []Node  `yaml:"nodes"`
}

// Console says how to reach and log in to a console.
type Console struct {
	URL      string `yaml:"url"`
	Username string `yaml:"username,omitempty"`
	// Password is the password in force, whichever its source (password,
	// password_file or the INDEXIMA_PASSWORD environment variable). It
	// marshals as <secret>.
	Password promconfig.Secret `yaml:"password,omitempty"`
	// PasswordSource says where Password came from, for logs: "password",
	// "password_file <path>", "env INDEXIMA_PASSWORD" or "" (none).
	PasswordSource string               `yaml:"password_source,omitempty"`
	PasswordFile   string               `yaml:"password_file,omitempty"`
	Timeout        time.Duration        `yaml:"timeout"`
	TLSConfig      promconfig.TLSConfig `yaml:"tls_config,omitempty"`
}

// Node is one node of a cluster.
type Node struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	Name string `yaml:"name"` // label value; host:port unless set
	// Number is the node's number in its cluster, as NODE_DOWN events name
	// a node (their comment); nil when not configured. It lets the
	// down_node label carry the node's name instead of its number.
	Number *int `yaml:"number,omitempty"`
}

// Load reads, decodes, completes and validates the file at path. It reads
// the password file too, so calling it again picks up a rotated password.
// Every error is an *Error listing all the problems found.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Problems: []string{readProblem(err)}}
	}
	cfg, err := Parse(data, filepath.Dir(path))
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.File = path
			return nil, e
		}
		return nil, &Error{File: path, Problems: []string{err.Error()}}
	}
	return cfg, nil
}

// Parse decodes and validates a configuration held in memory. Relative
// paths in it (password_file, tls_config files) are taken relative to dir.
func Parse(data []byte, dir string) (*Config, error) {
	f, err := decode(data)
	if err != nil {
		return nil, &Error{Problems: []string{err.Error()}}
	}
	v := &validator{dir: dir}
	cfg := v.file(f)
	if len(v.problems) > 0 {
		return nil, &Error{Problems: v.problems}
	}
	sort.Slice(cfg.Clusters, func(i, j int) bool { return cfg.Clusters[i].Name < cfg.Clusters[j].Name })
	return cfg, nil
}

// NodeCount is the number of nodes over every cluster.
func (c *Config) NodeCount() int {
	n := 0
	for _, cl := range c.Clusters {
		n += len(cl.Nodes)
	}
	return n
}

func readProblem(err error) string {
	switch {
	case os.IsNotExist(err):
		return "file not found (give the path with --config.file, or run with --demo)"
	case os.IsPermission(err):
		return "permission denied"
	}
	return fserr.Bare(err).Error()
}
