package apiclient

import (
	"fmt"
	"io"
)

// Config and Client hold the password (and the Client a token). They format
// themselves through fmt.Formatter for every verb, so that no %v, %+v, %#v
// or %d of a struct that embeds them can print a secret.

// String describes the config without its secrets.
func (cfg Config) String() string {
	pw := "<none>"
	if cfg.Password != "" {
		pw = "<secret>"
	}
	return fmt.Sprintf("apiclient.Config{URL:%q Username:%q Password:%s Timeout:%s TLS:{CAFile:%q CertFile:%q KeyFile:%q ServerName:%q InsecureSkipVerify:%t} MaxBodyBytes:%d LoginBackoff:%s MaxLoginBackoff:%s UserAgent:%q}",
		redactURL(cfg.URL), cfg.Username, pw, cfg.Timeout, cfg.TLS.CAFile, cfg.TLS.CertFile,
		cfg.TLS.KeyFile, cfg.TLS.ServerName, cfg.TLS.InsecureSkipVerify, cfg.MaxBodyBytes,
		cfg.LoginBackoff, cfg.MaxLoginBackoff, cfg.UserAgent)
}

// GoString is String: %#v must not print the password either.
func (cfg Config) GoString() string { return cfg.String() }

// Format implements fmt.Formatter so that every verb prints String.
func (cfg Config) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, cfg.String()) }

// String describes the client without its secrets.
func (c *Client) String() string {
	if c == nil {
		return "apiclient.Client(nil)"
	}
	return fmt.Sprintf("apiclient.Client{console:%q user:%q}", redactURL(c.cfg.URL), c.cfg.Username)
}

// GoString is String.
func (c *Client) GoString() string { return c.String() }

// Format implements fmt.Formatter so that every verb prints String. Its
// value receiver covers a Client copied by value as well as a *Client.
func (c Client) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, (&c).String()) }
