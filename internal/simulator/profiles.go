package simulator

import (
	"fmt"
	"strings"
)

// A profile is a named bundle of readings (readings.go) and of the other
// console behaviours a real console was seen to have. The exporter is
// checked against every profile, and against readings drawn at random.
type profile struct {
	name  string
	doc   string
	apply func(*Config)
}

var profiles = []profile{
	{"running", "events listed in runnings while they run and in reqs once completed; `last` is the node's clock (the default)",
		func(*Config) {}},
	{"completed-only", "an event is listed only once it has completed, dated at its start; runnings always empty",
		func(c *Config) { c.Runnings = RunningsEmpty }},
	{"console-clock", "`last` is the console's clock, so a node whose clock lags dates its events behind `last`; runnings listed",
		func(c *Config) { c.Last = LastConsoleClock }},
	{"console-clock-completed-only", "`last` is the console's clock and events are listed only once completed",
		func(c *Config) { c.Last, c.Runnings = LastConsoleClock, RunningsEmpty }},
	{"newest-first", "day and lastevents listings newest first; a listing cap keeps the newest events",
		func(c *Config) { c.NewestFirst, c.CapKeepsNewest = true, true }},
	{"sso-login-page", "published behind a single-sign-on proxy: a call with an expired session gets 200 and an HTML login page",
		func(c *Config) { c.SSOProxy = SSOLoginPage }},
	{"sso-redirect", "published behind a single-sign-on proxy: a call with an expired session gets a 302 to /login",
		func(c *Config) { c.SSOProxy = SSORedirect }},
}

// ProfileNames lists the console profiles, the default first.
func ProfileNames() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.name
	}
	return out
}

// ProfileDoc describes a profile in one line ("" for an unknown name).
func ProfileDoc(name string) string {
	for _, p := range profiles {
		if p.name == name {
			return p.doc
		}
	}
	return ""
}

// ApplyProfile sets the choices of the named profile on c (other fields,
// CountRunning included, are left as they are).
func (c *Config) ApplyProfile(name string) error {
	for _, p := range profiles {
		if p.name == name {
			p.apply(c)
			return nil
		}
	}
	return fmt.Errorf("unknown console profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}
