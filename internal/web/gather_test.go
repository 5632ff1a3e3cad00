package web

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// countingCollector counts its Collect calls: gathering must never collect
// (and so poll the nodes) twice.
type countingCollector struct {
	desc  *prometheus.Desc
	calls atomic.Int32
}

func (c *countingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c *countingCollector) Collect(ch chan<- prometheus.Metric) {
	c.calls.Add(1)
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, "b")
}

func text(t *testing.T, mfs []*dto.MetricFamily) string {
	t.Helper()
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// inOrder is InOrder of plain gatherers (registries).
func inOrder(gs ...prometheus.Gatherer) InOrder {
	out := make(InOrder, len(gs))
	for i, g := range gs {
		out[i] = prometheus.ToTransactionalGatherer(g)
	}
	return out
}

// doneCounter is a transactional gatherer of one family that counts the
// calls of its done.
type doneCounter struct {
	name  string
	dones *atomic.Int32
}

func (g doneCounter) Gather() ([]*dto.MetricFamily, func(), error) {
	mf := &dto.MetricFamily{Name: &g.name, Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: new(float64)}}}}
	return []*dto.MetricFamily{mf}, func() { g.dones.Add(1) }, nil
}

// The done of an InOrder hands back the families of every gatherer, each
// once, and not before it is called: the exporter's families are written
// again by its next scrape.
func TestInOrderDoneCallsEveryGatherersDone(t *testing.T) {
	var dones atomic.Int32
	for _, names := range [][]string{{"a", "b", "c"}, {"a", "a"}} {
		dones.Store(0)
		var g InOrder
		for _, n := range names {
			g = append(g, doneCounter{name: n, dones: &dones})
		}
		_, done, _ := g.Gather()
		if n := dones.Load(); n != 0 {
			t.Fatalf("%v: %d done called before InOrder's done", names, n)
		}
		done()
		if n := dones.Load(); n != int32(len(names)) {
			t.Fatalf("%v: %d done called, want %d", names, n, len(names))
		}
	}
}

func TestInOrderJoinsLikeGatherers(t *testing.T) {
	main, api := prometheus.NewRegistry(), prometheus.NewRegistry()
	main.MustRegister(collectors.NewGoCollector())
	cc := &countingCollector{desc: prometheus.NewDesc("zz_nodes", "Nodes.", []string{"n"}, nil)}
	main.MustRegister(cc)
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aa_calls_total", Help: "Calls."}, []string{"endpoint"})
	calls.WithLabelValues("x").Inc()
	api.MustRegister(calls)

	got, done, err := inOrder(main, api).Gather()
	defer done()
	if err != nil {
		t.Fatal(err)
	}
	if n := cc.calls.Load(); n != 1 {
		t.Fatalf("the collector ran %d times for one gather", n)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].GetName() >= got[i].GetName() {
			t.Fatalf("families not sorted by name: %s before %s", got[i-1].GetName(), got[i].GetName())
		}
	}
	want, err := prometheus.Gatherers{main, api}.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// The Go collector's values move between the two gathers: compare the
	// families and series, not the numbers.
	strip := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if i := strings.LastIndexByte(l, ' '); i > 0 && !strings.HasPrefix(l, "#") {
				l = l[:i]
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	if g, w := strip(text(t, got)), strip(text(t, want)); g != w {
		t.Fatalf("InOrder and Gatherers disagree:\n--- InOrder\n%s\n--- Gatherers\n%s", g, w)
	}
}

func TestInOrderMergesASharedNameWithoutCollectingTwice(t *testing.T) {
	a, b := prometheus.NewRegistry(), prometheus.NewRegistry()
	ca := &countingCollector{desc: prometheus.NewDesc("shared", "Shared.", []string{"n"}, nil)}
	a.MustRegister(ca)
	b.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shared", Help: "Shared.", ConstLabels: prometheus.Labels{"n": "a"}}, func() float64 { return 2 }))

	got, done, err := inOrder(a, b).Gather()
	defer done()
	if err != nil {
		t.Fatal(err)
	}
	if n := ca.calls.Load(); n != 1 {
		t.Fatalf("the collector ran %d times for one gather", n)
	}
	if len(got) != 1 || len(got[0].GetMetric()) != 2 {
		t.Fatalf("a name in both registries must give one family of both series, got:\n%s", text(t, got))
	}

	// The same series in both: an error, as Gatherers reports it.
	c := prometheus.NewRegistry()
	c.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shared", Help: "Shared.", ConstLabels: prometheus.Labels{"n": "b"}}, func() float64 { return 3 }))
	if _, _, err := inOrder(a, c).Gather(); err == nil || !strings.Contains(err.Error(), "collected before") {
		t.Fatalf("a series in both registries: err = %v, want Gatherers' duplicate error", err)
	}
}

// InOrder gathers what prometheus.Gatherers gathers, or fails as it does,
// on registries of fuzzed families: names drawn from a few (so that some
// are in two registries), help and series of their own.
func FuzzInOrderAsGatherers(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{1, 1, 9, 1, 1, 9, 2, 2, 2})
	f.Add([]byte{3, 0, 0, 3, 0, 0, 4, 1, 1})
	f.Fuzz(func(t *testing.T, plan []byte) {
		regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry(), prometheus.NewRegistry()}
		// Each three bytes: a registry, a family name, a label value.
		for i := 0; i+2 < len(plan) && i < 60; i += 3 {
			reg := regs[int(plan[i])%len(regs)]
			name := fmt.Sprintf("fam_%d", plan[i+1]%5)
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Help " + name + ".",
				ConstLabels: prometheus.Labels{"v": fmt.Sprint(plan[i+2] % 4)}})
			g.Set(float64(plan[i+2]))
			_ = reg.Register(g) // a duplicate within a registry is refused there
		}
		gs := make([]prometheus.Gatherer, len(regs))
		for i, r := range regs {
			gs[i] = r
		}
		got, done, gotErr := inOrder(gs...).Gather()
		defer done()
		want, wantErr := prometheus.Gatherers(gs).Gather()
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("InOrder error %v, Gatherers error %v", gotErr, wantErr)
		}
		if g, w := text(t, got), text(t, want); g != w {
			t.Fatalf("InOrder and Gatherers disagree:\n--- InOrder\n%s\n--- Gatherers\n%s", g, w)
		}
	})
}
