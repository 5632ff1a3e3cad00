package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"
)

// The types of this file mirror the YAML document exactly; nothing outside
// this package sees them. Pointers tell "absent" from "zero" where the
// difference matters (port: 0 is an error, a missing port is 9999).

type fileYAML struct {
	Console  *consoleYAML            `yaml:"console"`
	Nodes    []nodeYAML              `yaml:"nodes"`
	Clusters map[string]*clusterYAML `yaml:"clusters"`
}

type clusterYAML struct {
	Console *consoleYAML `yaml:"console"`
	Nodes   []nodeYAML   `yaml:"nodes"`
}

type consoleYAML struct {
	URL          string            `yaml:"url"`
	Username     string            `yaml:"username"`
	Password     promconfig.Secret `yaml:"password"`
	PasswordFile string            `yaml:"password_file"`
	Timeout      *time.Duration    `yaml:"timeout"`
	TLSConfig    tlsYAML           `yaml:"tls_config"`
}

// tlsYAML holds the file-based subset of promconfig.TLSConfig. We do not
// decode into promconfig.TLSConfig itself: its own UnmarshalYAML validates
// before we know where the block is, giving errors without a line or a field
// path, and inline keys or secret-manager refs would be accepted but unused.
type tlsYAML struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
	MinVersion         string `yaml:"min_version"`
	MaxVersion         string `yaml:"max_version"`
}

type nodeYAML struct {
	Host   string   `yaml:"host"`
	Port   *int     `yaml:"port"`
	Name   string   `yaml:"name"`
	Number *lineInt `yaml:"number"`
}

// lineInt is an integer and the line it was written on: a duplicate node
// number is reported at both of its lines.
type lineInt struct {
	Value, Line int
}

// UnmarshalYAML takes a whole number only: yaml.v3 would cut 1.5 to 1.
func (l *lineInt) UnmarshalYAML(n *yaml.Node) error {
	l.Line = n.Line
	shown := "a " + map[yaml.Kind]string{yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}[n.Kind]
	if n.Kind == yaml.ScalarNode {
		shown = strconv.Quote(n.Value)
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&l.Value) != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: node number %s is not a whole number", n.Line, shown)}}
	}
	return nil
}

// sectionNames turns the Go type names in yaml.v3's messages into the names
// an operator sees in the file.
var sectionNames = map[string]string{
	"config.fileYAML":    "the top level",
	"config.clusterYAML": "a cluster",
	"config.consoleYAML": "console",
	"config.tlsYAML":     "tls_config",
	"config.nodeYAML":    "a node",
}

var unknownFieldRE = regexp.MustCompile(`^line (\d+): field (.+) not found in type (\S+)$`)

// decode parses data strictly: an unknown key, a duplicated key or a second
// YAML document is an error.
func decode(data []byte) (*fileYAML, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f fileYAML
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: a second YAML document; the file must hold exactly one", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(err)
	}
	return &f, nil
}

// yamlError rewrites yaml.v3's errors to one line each, without the Go type
// names and without the "yaml:" prefix.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			msgs = append(msgs, rewriteTypeError(m))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return errors.New(oneLine(msg))
}

func rewriteTypeError(m string) string {
	if g := unknownFieldRE.FindStringSubmatch(m); g != nil {
		where := sectionNames[g[3]]
		if where == "" {
			where = "this section"
		}
		return fmt.Sprintf("line %s: unknown key %q in %s", g[1], g[2], where)
	}
	// "cannot unmarshal !!str `x` into time.Duration": say what is expected.
	m = strings.ReplaceAll(m, "into time.Duration", "into a duration (e.g. 10s)")
	m = strings.ReplaceAll(m, "into *time.Duration", "into a duration (e.g. 10s)")
	for goName, name := range sectionNames {
		m = strings.ReplaceAll(m, goName, name)
	}
	return oneLine(m)
}

// oneLine keeps every error on one line, as the command line promises.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
