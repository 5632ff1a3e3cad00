// Command profiledexporter is indexima_exporter with profiles written for
// performance work (docs/performance.md): give it to the load harness with
// -exporter and read the profiles with go tool pprof.
//
//	CPUPROFILE=file   CPU profile of the whole run, written when it stops;
//	                  "{pid}" in the name becomes the process ID (the
//	                  harness starts one exporter per row)
//	HEAPPROFILE=file  heap profile (1 sample per 4 KiB) rewritten each time
//	                  the live heap after a collection reaches a new high
//	INFLIGHTPROFILE=file  heap profile (as above) after a collection made
//	                  when more than a thousand goroutines run (the memory
//	                  of the polls under way in a large scrape), rewritten
//	                  at each scrape: the last is the run's last scrape's
//	MEMCLASSES=file   the runtime's memory classes (heap objects, stacks,
//	                  free spans, ...) at the moment their total was
//	                  highest, sampled every 5 ms, written when it stops
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
	"sync"
	"time"

	"github.com/indexima-exporter/indexima_exporter/internal/program"
)

func main() {
	stop := func() {}
	if path := os.Getenv("CPUPROFILE"); path != "" {
		f, err := createWithPID(path)
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
	if path := os.Getenv("INFLIGHTPROFILE"); path != "" {
		runtime.MemProfileRate = 4096
		go writeHeapInFlight(path)
	}
	if path := os.Getenv("MEMCLASSES"); path != "" {
		prev := stop
		write := sampleMemoryClasses()
		stop = func() { prev(); write(path) }
	}
	code := program.Run(os.Args[1:], os.Stdout, os.Stderr)
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
			writeHeap(path)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// sampleMemoryClasses samples the runtime's memory classes until the
// returned function writes the sample whose total was highest.
func sampleMemoryClasses() func(path string) {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") && d.Name != "/memory/classes/total:bytes" {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	var mu sync.Mutex
	high := make([]metrics.Sample, len(samples))
	var highTotal uint64
	go func() {
		for {
			metrics.Read(samples)
			var total uint64
			for _, s := range samples {
				total += s.Value.Uint64()
			}
			mu.Lock()
			if total > highTotal {
				highTotal = total
				copy(high, samples)
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func(path string) {
		mu.Lock()
		defer mu.Unlock()
		f, err := createWithPID(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profiledexporter: MEMCLASSES:", err)
			return
		}
		defer f.Close()
		fmt.Fprintf(f, "%-50s %10.1f MiB\n", "total", float64(highTotal)/(1<<20))
		for _, s := range high {
			fmt.Fprintf(f, "%-50s %10.1f MiB\n", s.Name, float64(s.Value.Uint64())/(1<<20))
		}
	}
}

// writeHeapInFlight rewrites the heap profile whenever more than a
// thousand goroutines run (polls under way), after a collection that makes
// it show them, at most once a scrape.
func writeHeapInFlight(path string) {
	for {
		for runtime.NumGoroutine() < 1000 {
			time.Sleep(time.Millisecond)
		}
		runtime.GC()
		writeHeap(path)
		for runtime.NumGoroutine() >= 1000 {
			time.Sleep(time.Millisecond)
		}
	}
}

// createWithPID creates the file path with "{pid}" in it made the process
// ID (the harness starts one exporter per row).
func createWithPID(path string) (*os.File, error) {
	return os.Create(strings.ReplaceAll(path, "{pid}", strconv.Itoa(os.Getpid())))
}

// writeHeap writes the heap profile to path; a failure is said on stderr,
// as the other profiles' are (a missing profile would otherwise pass for
// one never taken).
func writeHeap(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiledexporter: heap profile:", err)
	}
}
