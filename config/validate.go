package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	promconfig "github.com/prometheus/common/config"
)

// moduleNameRE: cluster names end up in URLs (/probe?module=) and labels.
var moduleNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// validator turns the YAML shape into a Config, collecting every problem
// (one line each, naming the field) instead of stopping at the first.
type validator struct {
	dir      string // directory of the file: base of relative paths
	problems []string
}

func (v *validator) addf(field, format string, args ...any) {
	v.problems = append(v.problems, field+": "+fmt.Sprintf(format, args...))
}

func (v *validator) file(f *fileYAML) *Config {
	cfg := &Config{}
	single := f.Console != nil || f.Nodes != nil
	switch {
	case f.Clusters != nil && single:
		v.problems = append(v.problems, "clusters: give either console and nodes at the top level (one cluster) or clusters (several), not both")
	case f.Clusters != nil:
		if len(f.Clusters) == 0 {
			v.addf("clusters", "empty; name at least one cluster")
		}
		names := make([]string, 0, len(f.Clusters))
		for name := range f.Clusters {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			path := "clusters." + name
			if !moduleNameRE.MatchString(name) {
				v.addf(path, "cluster name %q: use letters, digits, '_', '-' and '.', starting with a letter or digit", name)
			}
			c := f.Clusters[name]
			if c == nil {
				v.addf(path, "empty; give its console and nodes")
				continue
			}
			cfg.Clusters = append(cfg.Clusters, v.cluster(name, path+".", c.Console, c.Nodes))
		}
	default:
		cfg.Clusters = append(cfg.Clusters, v.cluster("", "", f.Console, f.Nodes))
	}
	return cfg
}

func (v *validator) cluster(name, prefix string, c *consoleYAML, nodes []nodeYAML) Cluster {
	cl := Cluster{Name: name}
	if c == nil {
		v.addf(prefix+"console", "missing; give at least its url")
	} else {
		cl.Console = v.console(prefix+"console.", c)
	}
	if len(nodes) == 0 {
		v.addf(prefix+"nodes", "no node configured; list at least one")
	}
	byName := map[string]int{}
	byAddr := map[string]int{}
	byNumber := map[int]int{}
	for i, n := range nodes {
		path := fmt.Sprintf("%snodes[%d]", prefix, i)
		node := v.node(path, n)
		if n.Number != nil {
			if j, dup := byNumber[n.Number.Value]; dup {
				v.addf(path+".number", "line %d: duplicate node number %d (also %snodes[%d], line %d)",
					n.Number.Line, n.Number.Value, prefix, j, nodes[j].Number.Line)
			} else {
				byNumber[n.Number.Value] = i
			}
		}
		addr := net.JoinHostPort(node.Host, strconv.Itoa(node.Port))
		if j, dup := byAddr[addr]; dup && node.Host != "" {
			v.addf(path, "node %s is listed twice (also %snodes[%d])", addr, prefix, j)
		} else if j, dup := byName[node.Name]; dup && node.Name != "" {
			v.addf(path+".name", "duplicate node name %q (also %snodes[%d])", node.Name, prefix, j)
		}
		if _, seen := byAddr[addr]; !seen {
			byAddr[addr] = i
		}
		if _, seen := byName[node.Name]; !seen {
			byName[node.Name] = i
		}
		cl.Nodes = append(cl.Nodes, node)
	}
	return cl
}

func (v *validator) node(path string, n nodeYAML) Node {
	node := Node{Host: n.Host, Port: DefaultNodePort, Name: n.Name}
	if n.Port != nil {
		node.Port = *n.Port
		if node.Port < 1 || node.Port > 65535 {
			v.addf(path+".port", "%d is out of range 1-65535", node.Port)
		}
	}
	switch {
	case n.Host == "":
		v.addf(path+".host", "missing")
	case strings.ContainsAny(n.Host, "/ \t\r\n"):
		v.addf(path+".host", "%q is not a host name (give the bare host, the port in port:)", n.Host)
	case strings.Contains(n.Host, ":") && net.ParseIP(n.Host) == nil:
		v.addf(path+".host", "%q is not a host name (give the port in port:, not in host:)", n.Host)
	}
	if node.Name == "" {
		node.Name = net.JoinHostPort(node.Host, strconv.Itoa(node.Port))
	}
	if n.Number != nil {
		if n.Number.Value < 0 {
			v.addf(path+".number", "line %d: %d is negative (give the node's number as NODE_DOWN events name it: 0 or more)", n.Number.Line, n.Number.Value)
		}
		number := n.Number.Value
		node.Number = &number
	}
	return node
}

func (v *validator) console(prefix string, c *consoleYAML) Console {
	con := Console{
		URL:          c.URL,
		Username:     c.Username,
		PasswordFile: c.PasswordFile,
		Timeout:      DefaultTimeout,
	}
	v.consoleURL(prefix+"url", c.URL)
	if c.Timeout != nil {
		con.Timeout = *c.Timeout
		if con.Timeout <= 0 {
			v.addf(prefix+"timeout", "must be greater than 0 (got %s)", con.Timeout)
		}
	}
	con.Password, con.PasswordSource = v.password(prefix, c)
	con.TLSConfig = v.tls(prefix+"tls_config", c.TLSConfig)
	if con.PasswordFile != "" {
		con.PasswordFile = promconfig.JoinDir(v.dir, con.PasswordFile)
	}
	return con
}

func (v *validator) consoleURL(field, raw string) {
	if raw == "" {
		v.addf(field, "missing (e.g. https://console.example:8082)")
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url's errors quote the whole URL, which may hold credentials.
		v.addf(field, "not a valid URL%s", schemeHint(raw))
		return
	}
	shown := u.Redacted()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		if hint := schemeHint(raw); hint != "" {
			// Not shown: without its scheme a URL's password is not
			// one that Redacted finds ("user:pw@host" parses as
			// scheme "user", opaque "pw@host"); the hint masks it.
			v.addf(field, "no scheme%s", hint)
			break
		}
		if u.Opaque != "" { // "a:b…": Redacted masks no password there
			v.addf(field, "scheme %q not supported (use http:// or https://)", u.Scheme)
			break
		}
		v.addf(field, "%q: scheme %q not supported (use http:// or https://)", shown, u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		v.addf(field, "%q: no host (e.g. https://console.example:8082)%s", shown, schemeHint(raw))
	case u.User != nil:
		v.addf(field, "%q: holds credentials; use username and password_file instead", shown)
	case u.RawQuery != "" || u.Fragment != "":
		v.addf(field, "%q: must not have a query or a fragment", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			v.addf(field, "%q: port %s out of range 1-65535", shown, p)
		}
	}
}

// schemeHint is "; did you mean http://…?" for a URL written without its
// scheme (the likeliest slip: "127.0.0.1:18082" or "console:8082", which
// url.Parse refuses or reads as a scheme), when http:// in front makes a URL
// with a host; "" otherwise. The URL is shown with any password masked.
func schemeHint(raw string) string {
	if strings.Contains(raw, "://") {
		return ""
	}
	u, err := url.Parse("http://" + raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", u.Redacted())
}

func (v *validator) tls(field string, t tlsYAML) promconfig.TLSConfig {
	tc := promconfig.TLSConfig{
		CAFile:             t.CAFile,
		CertFile:           t.CertFile,
		KeyFile:            t.KeyFile,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify,
		MinVersion:         v.tlsVersion(field+".min_version", t.MinVersion),
		MaxVersion:         v.tlsVersion(field+".max_version", t.MaxVersion),
	}
	if tc.MinVersion != 0 && tc.MaxVersion != 0 && tc.MinVersion > tc.MaxVersion {
		v.addf(field, "min_version %s is above max_version %s", t.MinVersion, t.MaxVersion)
	}
	if (tc.CertFile == "") != (tc.KeyFile == "") {
		v.addf(field, "give cert_file and key_file together (client certificate), or neither")
	}
	tc.SetDirectory(v.dir)
	for _, f := range []struct{ key, path string }{
		{"ca_file", tc.CAFile}, {"cert_file", tc.CertFile}, {"key_file", tc.KeyFile},
	} {
		if f.path == "" {
			continue
		}
		if err := checkReadable(f.path); err != nil {
			v.addf(field+"."+f.key, "%q: %v", f.path, err)
		}
	}
	return tc
}

func (v *validator) tlsVersion(field, s string) promconfig.TLSVersion {
	if s == "" {
		return 0
	}
	tv, ok := promconfig.TLSVersions[s]
	if !ok {
		v.addf(field, "%q is not a TLS version (TLS10, TLS11, TLS12 or TLS13)", s)
	}
	return tv
}
