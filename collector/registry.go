package collector

import (
	"fmt"
	"sort"

	"github.com/alecthomas/kingpin/v2"
)

// subCollector emits one family of a node's metrics from the node's state,
// through the view's gauge, counter and histogram. An error means it could
// not say everything about that node this scrape.
type subCollector interface {
	update(v *nodeView) error
}

type factory struct {
	name      string
	defaultOn bool
	help      string
	new       func() subCollector
}

var factories = map[string]factory{}

// registerCollector is called from each sub-collector file's init.
func registerCollector(name string, defaultOn bool, help string, f func() subCollector) {
	if _, dup := factories[name]; dup {
		panic(fmt.Sprintf("collector %q registered twice", name))
	}
	factories[name] = factory{name: name, defaultOn: defaultOn, help: help, new: f}
}

func collectorNames() []string {
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RegisterFlags adds --collector.NAME / --no-collector.NAME for every
// sub-collector to app; the returned function gives the switches after parsing.
func RegisterFlags(app *kingpin.Application) func() map[string]bool {
	flags := map[string]*bool{}
	for _, name := range collectorNames() {
		f := factories[name]
		def := "disabled"
		if f.defaultOn {
			def = "enabled"
		}
		flags[name] = app.Flag("collector."+name,
			fmt.Sprintf("Enable the %s collector (%s; default %s).", name, f.help, def)).
			Default(fmt.Sprint(f.defaultOn)).Bool()
	}
	return func() map[string]bool {
		m := make(map[string]bool, len(flags))
		for n, v := range flags {
			m[n] = *v
		}
		return m
	}
}

// namedCollector is an enabled sub-collector.
type namedCollector struct {
	name string
	c    subCollector
}

// enabledCollectors builds the sub-collectors switched on by enabled (names
// missing from it get their default). Unknown names are an error, so a typo
// in a caller's map is not silently ignored.
func enabledCollectors(enabled map[string]bool) ([]namedCollector, error) {
	for n := range enabled {
		if _, ok := factories[n]; !ok {
			return nil, fmt.Errorf("unknown collector %q (known: %v)", n, collectorNames())
		}
	}
	var out []namedCollector
	for _, name := range collectorNames() {
		f := factories[name]
		on, set := enabled[name]
		if !set {
			on = f.defaultOn
		}
		if on {
			out = append(out, namedCollector{name: name, c: f.new()})
		}
	}
	return out, nil
}
