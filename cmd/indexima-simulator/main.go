// Command indexima-simulator runs the simulated cluster console alone, so
// the exporter (or curl) can be tried without a cluster. See docs/simulator.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/indexima-exporter/indexima_exporter/internal/simulator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr, nil)
	stop()
	os.Exit(code)
}

// run serves until ctx ends; ready (if not nil) gets the console URL once it
// listens. It returns the process exit code.
func run(ctx context.Context, args []string, logOut io.Writer, ready func(url string)) int {
	o, err := parseFlags(args)
	if err != nil {
		fmt.Fprintln(logOut, "indexima-simulator:", err)
		return 2
	}
	logger := log.NewLogfmtLogger(log.NewSyncWriter(logOut))
	logger = level.NewFilter(logger, level.Allow(level.ParseDefault(o.logLevel, level.InfoValue())))
	logger = log.With(logger, "ts", log.DefaultTimestampUTC)

	var clock simulator.Clock
	if o.speed != 1 {
		clock = simulator.NewScaledClock(time.Now(), o.speed)
	}
	cfg, err := o.config(clock)
	if err != nil {
		level.Error(logger).Log("msg", "bad flags", "err", err)
		return 2
	}
	sim := simulator.New(cfg)
	sim.EnableAdmin()
	if err := sim.Start(o.listen); err != nil {
		level.Error(logger).Log("msg", "cannot listen", "address", o.listen, "err", err)
		return 1
	}
	users := make([]string, 0, len(cfg.Users))
	for u := range cfg.Users {
		users = append(users, u) // names only: passwords never go to logs
	}
	level.Info(logger).Log("msg", "simulated console listening", "url", sim.URL(),
		"nodes", len(cfg.Nodes), "users", fmt.Sprint(users), "auth", len(cfg.Users) > 0,
		"rate", o.rate, "speed", o.speed, "scenario", o.scenario)
	if o.speed > 1 {
		level.Warn(logger).Log("msg", "the console's clock runs ahead of the real one (--speed above 1): "+
			"its events are dated in the future, and ages Prometheus computes from the exporter's timestamps are negative",
			"speed", o.speed)
	}
	if ready != nil {
		ready(sim.URL())
	}
	if o.scenario == "lively" {
		simulator.StartLively(ctx, sim, simulator.LivelyConfig{Clock: clock, Seed: o.seed,
			Every: o.every, Logger: logger})
	}
	<-ctx.Done()
	level.Info(logger).Log("msg", "shutting down")
	if err := sim.Close(); err != nil {
		level.Error(logger).Log("msg", "close", "err", err)
		return 1
	}
	return 0
}
