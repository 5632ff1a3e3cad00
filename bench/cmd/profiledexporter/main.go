// Command profiledexporter is indexima_exporter with profiles written for
// performance work (docs/performance.md): give it to the load harness with
// -exporter and read the profiles with go tool pprof.
//
//	CPUPROFILE=file   CPU profile of the whole run, written when it stops;
//	                  "{pid}" in the name becomes the process ID (the
//	                  harness starts one exporter per row)
//	HEAPPROFILE=file  heap profile (1 sample per 4 KiB) rewritten each time
//	                  the live heap after a collection reaches a new high
//
// It is not the shipped binary: the sampling of HEAPPROFILE costs CPU.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/app"
)

func main() {
	stop := func() {}
	if path := os.Getenv("CPUPROFILE"); path != "" {
		f, err := os.Create(strings.ReplaceAll(path, "{pid}", strconv.Itoa(os.Getpid())))
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "profiledexporter: CPUPROFILE:", err)
			os.Exit(2)
		}
		stop = func() { pprof.StopCPUProfile(); f.Close() }
	}
	if path := os.Getenv("HEAPPROFILE"); path != "" {
		runtime.MemProfileRate = 4096
		go writeHeapAtHighs(path)
	}
	code := app.Run(os.Args[1:], os.Stdout, os.Stderr)
	stop() // os.Exit skips deferred calls
	os.Exit(code)
}

// writeHeapAtHighs rewrites the heap profile whenever the live heap (as of
// the latest collection, which is also what the profile shows) is higher
// than ever, until the process ends.
func writeHeapAtHighs(path string) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var high uint64
	for {
		metrics.Read(live)
		if v := live[0].Value.Uint64(); v > high {
			high = v
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}
