// Package program is the indexima_exporter program's wiring: the command
// line and logging, the configuration's loading and reload, the console
// clients, the state file, the demo, and the HTTP server that serves the
// endpoints of package web. main only calls Run.
package program

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-kit/log"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // configuration, listening, serving
	exitUsage = 2 // bad command line
)

// Run runs the exporter until SIGTERM or SIGINT and returns the exit status.
// Every failure a user can cause ends with one line on stderr.
func Run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return run(ctx, args, stdout, stderr, hup)
}

// run is Run with the signals given: ctx ends the program, hup reloads.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal) int {
	o, code, done := parseArgs(args, stdout, stderr)
	if done {
		return code
	}
	if o.configCheck || o.configConnect {
		return checkConfig(ctx, o.configFile, o.configConnect, clientBuilder{logger: log.NewNopLogger()}.fileBuilder(o.configFile), stdout, stderr)
	}
	// Checks that need no log: a failed start prints its one line only.
	// The configuration first (the file, its password and TLS files): a
	// missing indexima.yml is the problem to report even when the port is
	// taken too (by an exporter already running, say).
	if !o.demo {
		if err := readConfig(o.configFile); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
	}
	if err := checkWeb(o.web); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	logger, slogger := newLoggers(stderr, o.logLevel, o.logFormat)
	p, err := newProgram(o, logger, stdout)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	defer p.close()
	p.started()
	return serve(ctx, p.handler, o.web, logger, slogger, p.reloader, hup, stderr)
}

// readConfig reads and builds the configuration file as a start does,
// without applying it (newProgram reads it again, and applies it).
func readConfig(path string) error {
	cfg, err := config.Load(path)
	if err == nil {
		_, err = clientBuilder{logger: log.NewNopLogger()}.fileBuilder(path)(cfg)
	}
	return err
}

// fail writes the one line a user sees when the program cannot go on.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	fmt.Fprintf(stderr, "%s: %s\n", Name, msg)
	return code
}
