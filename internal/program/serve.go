package program

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/exporter-toolkit/web"
)

// serve runs the HTTP server until ctx ends, reloading on SIGHUP.
func serve(ctx context.Context, handler http.Handler, flags *web.FlagConfig, logger log.Logger,
	slogger *slog.Logger, r *reloader, hup <-chan os.Signal, stderr io.Writer) int {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- web.ListenAndServe(srv, flags, slogger) }()
	for {
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fail(stderr, exitError, "%v", err)
			}
			return exitOK
		case <-hup:
			level.Info(logger).Log("msg", "SIGHUP: reloading the configuration")
			_ = r.Reload() // logged; the old configuration stays on failure
		case <-ctx.Done():
			level.Info(logger).Log("msg", "shutting down")
			shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := srv.Shutdown(shutCtx)
			cancel()
			if err != nil {
				level.Warn(logger).Log("msg", "shutdown", "err", err)
			}
			// ErrServerClosed after Shutdown; anything else is said too.
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				level.Warn(logger).Log("msg", "serving", "err", err)
			}
			return exitOK
		}
	}
}

// checkWeb validates --web.config.file and binds every TCP listen address
// once, before anything is logged, so a bad web configuration or a taken
// port is reported as the one line of a failed start.
func checkWeb(flags *web.FlagConfig) error {
	if *flags.WebConfigFile != "" {
		if err := web.Validate(*flags.WebConfigFile); err != nil {
			return fmt.Errorf("web config file %q: %v", *flags.WebConfigFile, err)
		}
	}
	if flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		return nil
	}
	for _, addr := range *flags.WebListenAddresses {
		if strings.HasPrefix(addr, "vsock://") {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("--web.listen-address %q: %v", addr, listenProblem(err))
		}
		l.Close()
	}
	return nil
}

func listenProblem(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err // "address already in use", "permission denied"
		}
		return oe.Err
	}
	return err
}
