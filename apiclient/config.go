package apiclient

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by New to zero fields.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultKeptConns       = 1024
	DefaultMaxBodyBytes    = 64 << 20
	DefaultLoginBackoff    = time.Second
	DefaultMaxLoginBackoff = 5 * time.Minute
	DefaultUserAgent       = "indexima_exporter"
)

// withDefaults checks cfg and fills its zero optional fields.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.URL == "" {
		return cfg, errors.New("apiclient: the console URL is empty")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return cfg, fmt.Errorf("apiclient: the console URL %q does not parse", redactURL(cfg.URL))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return cfg, fmt.Errorf("apiclient: the console URL %q must start with http:// or https://", redactURL(cfg.URL))
	}
	if u.Host == "" {
		return cfg, fmt.Errorf("apiclient: the console URL %q has no host", redactURL(cfg.URL))
	}
	if u.User != nil {
		// Credentials in the URL would end up in error messages.
		return cfg, errors.New("apiclient: the console URL must not hold credentials; set the username and password instead")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return cfg, fmt.Errorf("apiclient: the console URL %q must not have a query or fragment", redactURL(cfg.URL))
	}
	cfg.URL = strings.TrimRight(u.String(), "/")
	if cfg.Username == "" && cfg.Password != "" {
		return cfg, errors.New("apiclient: a password is set but no username")
	}
	for name, d := range map[string]time.Duration{"timeout": cfg.Timeout,
		"login backoff": cfg.LoginBackoff, "max login backoff": cfg.MaxLoginBackoff} {
		if d < 0 {
			return cfg, fmt.Errorf("apiclient: the %s is negative (%s)", name, d)
		}
	}
	if cfg.KeptConns < 0 {
		return cfg, fmt.Errorf("apiclient: the kept connections are negative (%d)", cfg.KeptConns)
	}
	if cfg.KeptConns == 0 {
		cfg.KeptConns = DefaultKeptConns
	}
	if cfg.MaxBodyBytes < 0 {
		return cfg, fmt.Errorf("apiclient: the max body bytes is negative (%d)", cfg.MaxBodyBytes)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.LoginBackoff == 0 {
		cfg.LoginBackoff = DefaultLoginBackoff
	}
	if cfg.MaxLoginBackoff == 0 {
		cfg.MaxLoginBackoff = DefaultMaxLoginBackoff
	}
	if cfg.MaxLoginBackoff < cfg.LoginBackoff {
		cfg.MaxLoginBackoff = cfg.LoginBackoff
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	return cfg, nil
}

// redactURL shows a URL without any user info, for error messages.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		return "<redacted>@" + raw[i+1:]
	}
	return raw
}
