package program

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
)

// parseArgs parses the command line. done means the program ends now with
// code (--help, --version, or an error already printed in one line).
func parseArgs(args []string, stdout, stderr io.Writer) (o *options, code int, done bool) {
	cl, o := newCommandLine()
	cl.UsageWriter(stdout)
	cl.ErrorWriter(stderr)
	// kingpin exits the process itself after --help and --version; we want
	// the status back instead, so run stays testable.
	terminated := -1
	cl.Terminate(func(code int) {
		if terminated < 0 {
			terminated = code
		}
	})
	_, err := cl.Parse(args)
	switch {
	case terminated >= 0:
		return nil, terminated, true
	case err != nil:
		return nil, fail(stderr, exitUsage, "%v (see --help)", flagError(cl, args, err)), true
	}
	if err := o.check(); err != nil {
		return nil, fail(stderr, exitUsage, "%v", err), true
	}
	return o, exitOK, false
}

// check refuses flag values and combinations kingpin cannot.
func (o *options) check() error {
	p := o.telemetryPath
	if !strings.HasPrefix(p, "/") || p == "/" || strings.HasPrefix(p, "/-/") || p == "/probe" || p == "/config" || p == "/sd" || p == "/status" {
		return fmt.Errorf("--web.telemetry-path %q: give a path starting with / that no other endpoint uses", p)
	}
	if o.externalURL != "" {
		u, err := url.Parse(o.externalURL)
		if err == nil && u.User != nil {
			// Not echoed: it holds a password, maybe.
			return errors.New("--web.external-url: give it without a user name or password: the landing page, /sd and /metrics show it")
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--web.external-url %q: give an http:// or https:// URL with a host and no query, such as http://localhost:%s", o.externalURL, DefaultPort)
		}
		o.externalURL = strings.TrimRight(o.externalURL, "/")
	}
	if o.lateWindow < time.Minute || o.lookBack < 0 || o.lookBackCalls < 2 {
		return fmt.Errorf("--events.late-window must be at least 1m, --events.lookback not negative and --events.lookback-calls at least 2 (got %s, %s and %d)", o.lateWindow, o.lookBack, o.lookBackCalls)
	}
	if o.timeoutOffset < 0 || o.timeoutOffset > time.Minute {
		return fmt.Errorf("--scrape.timeout-offset must be between 0 and 1m (got %s)", o.timeoutOffset)
	}
	if o.concurrency < 1 || o.maxLabelValues < 1 {
		return fmt.Errorf("--scrape.concurrency and --label.max-values must be at least 1 (got %d and %d)", o.concurrency, o.maxLabelValues)
	}
	if o.eventLogSize < units.MiB || o.eventLogKeep < 1 {
		return fmt.Errorf("--events.log.max-size must be at least 1MiB and --events.log.max-backups at least 1 (got %s and %d)", o.eventLogSize, o.eventLogKeep)
	}
	if (o.configCheck || o.configConnect) && o.demo {
		return errors.New("--config.check and --config.check.connect check a configuration file; --demo needs none")
	}
	return nil
}

// flagError names the flag in kingpin's value errors, which only quote the
// value ("strconv.ParseFloat: parsing \"many\": invalid syntax").
func flagError(cl *kingpin.Application, args []string, err error) error {
	pc, perr := cl.ParseContext(args)
	if perr != nil || pc == nil {
		return err
	}
	for i := len(pc.Elements) - 1; i >= 0; i-- {
		e := pc.Elements[i]
		f, ok := e.Clause.(*kingpin.FlagClause)
		if ok && e.Value != nil && strings.Contains(err.Error(), *e.Value) {
			var ne *strconv.NumError
			if errors.As(err, &ne) {
				return fmt.Errorf("--%s: %q is not a number", f.Model().Name, *e.Value)
			}
			return fmt.Errorf("--%s: %w", f.Model().Name, err)
		}
	}
	return err
}
