package config

import (
	"fmt"
	"path/filepath"
	"strings"

	promconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"
)

// The types of this file print the configuration in force in the file's
// own form (yaml.go), so that what /config shows loads again: the single
// form when there is one unnamed cluster, clusters by name otherwise;
// defaults written out; the password as <secret> where the file had one,
// password_file where it came from a file, and a comment where it came
// from the environment.

type printFile struct {
	Console  *printConsole            `yaml:"console,omitempty"`
	Nodes    []printNode              `yaml:"nodes,omitempty"`
	Clusters map[string]*printCluster `yaml:"clusters,omitempty"`
}

type printCluster struct {
	Console *printConsole `yaml:"console"`
	Nodes   []printNode   `yaml:"nodes"`
}

type printConsole struct {
	URL          string            `yaml:"url"`
	Username     string            `yaml:"username,omitempty"`
	Password     promconfig.Secret `yaml:"password,omitempty"`
	PasswordFile string            `yaml:"password_file,omitempty"`
	Timeout      string            `yaml:"timeout"`
	TLSConfig    *printTLS         `yaml:"tls_config,omitempty"`
}

type printTLS struct {
	CAFile             string `yaml:"ca_file,omitempty"`
	CertFile           string `yaml:"cert_file,omitempty"`
	KeyFile            string `yaml:"key_file,omitempty"`
	ServerName         string `yaml:"server_name,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify,omitempty"`
	MinVersion         string `yaml:"min_version,omitempty"`
	MaxVersion         string `yaml:"max_version,omitempty"`
}

type printNode struct {
	Host   string `yaml:"host"`
	Port   int    `yaml:"port"`
	Name   string `yaml:"name"`
	Number *int   `yaml:"number,omitempty"`
}

// String is the configuration in force as YAML in the file's form,
// defaults included and secrets hidden, for the /config page and debug
// logs. Saved to a file, it loads again (--config.check).
func (c *Config) String() string {
	var f printFile
	var notes []string
	if len(c.Clusters) == 1 && c.Clusters[0].Name == "" {
		cl := c.Clusters[0]
		f.Console, f.Nodes = printedConsole(cl.Console), printedNodes(cl.Nodes)
		notes = append(notes, envNote(cl, "the console")...)
	} else {
		f.Clusters = map[string]*printCluster{}
		for _, cl := range c.Clusters {
			f.Clusters[cl.Name] = &printCluster{Console: printedConsole(cl.Console), Nodes: printedNodes(cl.Nodes)}
			notes = append(notes, envNote(cl, "cluster "+cl.Name)...)
		}
	}
	var b strings.Builder
	for _, n := range notes {
		b.WriteString("# " + n + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return fmt.Sprintf("<config not printable: %v>", err)
	}
	return b.String()
}

// envNote says where a password taken from the environment came from: the
// file has no key for it.
func envNote(cl Cluster, what string) []string {
	if cl.Console.PasswordSource == "env "+PasswordEnv {
		return []string{fmt.Sprintf("%s: password from the environment (%s)", what, PasswordEnv)}
	}
	return nil
}

func printedConsole(con Console) *printConsole {
	p := &printConsole{URL: con.URL, Username: con.Username, Timeout: con.Timeout.String()}
	switch {
	case con.PasswordFile != "":
		p.PasswordFile = absolute(con.PasswordFile)
	case con.PasswordSource == "password":
		p.Password = con.Password // marshals as <secret>
	}
	t := con.TLSConfig
	pt := printTLS{CAFile: absolute(t.CAFile), CertFile: absolute(t.CertFile), KeyFile: absolute(t.KeyFile), ServerName: t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tlsVersionName(t.MinVersion), MaxVersion: tlsVersionName(t.MaxVersion)}
	if pt != (printTLS{}) {
		p.TLSConfig = &pt
	}
	return p
}

// absolute makes a path of the file absolute (a relative one is relative
// to the file's directory, which the printed copy does not share).
func absolute(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func printedNodes(nodes []Node) []printNode {
	out := make([]printNode, 0, len(nodes))
	for _, n := range nodes {
		// A conversion: a field added to Node stops the build here until
		// printNode says how it is printed.
		out = append(out, printNode(n))
	}
	return out
}

func tlsVersionName(v promconfig.TLSVersion) string {
	if v == 0 {
		return ""
	}
	for name, tv := range promconfig.TLSVersions {
		if tv == v {
			return name
		}
	}
	return ""
}
