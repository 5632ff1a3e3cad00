package tracker

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/indexima-exporter/indexima_exporter/tally"
)

// filler sets every settable field of a value at random: zero often enough
// that omitempty is exercised, and strings that encoding/json escapes. A
// field added to State is filled too, so an AppendJSON that does not write
// it fails TestAppendJSONIsEncodingJSON.
type filler struct{ r *rand.Rand }

var fillStrings = []string{"", "TABLE_LOADED", "sales.orders", "/core-1:9999", "a \"quoted\" name", `back\slash`,
	"tab\tnew\nline\x00nul\x1f", "<b>&amp;</b>", "é ü ✓", "\u2028\u2029", "bad \xff utf-8", "HYPER_INDEX_LOADED\x001795254569915\x00hi_orders_date"}

var fillFloats = []float64{0, 1, -1, 0.158, 147.168, 1e-7, -2.5e-9, 1e21, 1.5e300, 1800, 0.01, 123456789.125}

func (f filler) fill(v reflect.Value) {
	zero := f.r.IntN(4) == 0
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !zero {
			v.SetInt(int64(f.r.Uint64()) >> uint(64-v.Type().Bits())) // any value of the width, signed
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !zero {
			v.SetUint(f.r.Uint64() >> uint(64-v.Type().Bits()))
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(fillFloats[f.r.IntN(len(fillFloats))])
	case reflect.String:
		v.SetString(fillStrings[f.r.IntN(len(fillStrings))])
	case reflect.Pointer:
		if !zero {
			p := reflect.New(v.Type().Elem())
			f.fill(p.Elem())
			v.Set(p)
		}
	case reflect.Slice:
		switch f.r.IntN(3) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+f.r.IntN(4), 5)
			for i := range s.Len() {
				f.fill(s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		switch f.r.IntN(3) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + f.r.IntN(5) {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				f.fill(k)
				f.fill(e)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if fv := v.Field(i); fv.CanSet() {
				f.fill(fv)
			}
		}
	default:
		panic("filler: no case for " + v.Kind().String())
	}
}

func randomState(r *rand.Rand) *State {
	st := new(State)
	filler{r}.fill(reflect.ValueOf(st).Elem())
	st.Legacy = nil // its own case below
	for range r.IntN(40) {
		st.Known.entries = append(st.Known.entries, kEntry{date: 1795254569915 + r.Int64N(3_600_000) - 1_800_000, fp: r.Uint64()})
	}
	for range r.IntN(3) * r.IntN(20) {
		st.Known.baseline = append(st.Known.baseline, 1795254569915-r.Int64N(3_600_000))
	}
	for _, h := range st.Durations {
		if h != nil {
			h.Sum = math.Abs(h.Sum) // NaN and infinities are not in fillFloats; sums are not negative
		}
	}
	return st
}

// AppendJSON writes the same bytes as encoding/json, on states with every
// field set at random, and on the legacy form it hands to encoding/json.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	states := []*State{{}, {Contacted: true}}
	for range 3000 {
		states = append(states, randomState(r))
	}
	legacy := randomState(r)
	legacy.Legacy = &legacySeen{Floor: 7, Entries: map[uint64]legacySeenEntry{3: {Date: 9, Count: 2}}}
	states = append(states, legacy)
	for i, st := range states {
		want, err := appendEncodingJSON(nil, st)
		if err != nil {
			t.Fatalf("state %d: encoding/json: %v", i, err)
		}
		got, err := st.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatalf("state %d: AppendJSON: %v", i, err)
		}
		if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
			got = got[min(len(got), len("prefix")):]
			at := 0
			for at < min(len(got), len(want)) && got[at] == want[at] {
				at++
			}
			t.Fatalf("state %d: AppendJSON differs from encoding/json at byte %d:\n got …%s\nwant …%s", i, at, got[max(0, at-80):min(len(got), at+80)], want[max(0, at-80):min(len(want), at+80)])
		}
	}
	// The filled states set every field: check that none stayed zero in all
	// of them, or the comparison would not cover it.
	var union State
	for _, st := range states {
		markSet(reflect.ValueOf(&union).Elem(), reflect.ValueOf(st).Elem())
	}
	checkAllSet(t, "State", reflect.ValueOf(union))
}

// markSet sets in acc (to a non-zero value) every field non-zero in v.
func markSet(acc, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if acc.Field(i).CanSet() {
				markSet(acc.Field(i), v.Field(i))
			}
		}
	default:
		if !v.IsZero() {
			acc.Set(v)
		}
	}
}

func checkAllSet(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	if v.Kind() != reflect.Struct {
		if v.IsZero() {
			t.Errorf("%s is zero in every filled state", path)
		}
		return
	}
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() {
			checkAllSet(t, path+"."+f.Name, v.Field(i))
		}
	}
}

// A NaN is an error, as with encoding/json, not a state file that cannot
// be read back.
func TestAppendJSONRefusesNaN(t *testing.T) {
	st := &State{Tally: tally.Tally{Durations: map[string]*tally.Histogram{"X": {Sum: math.NaN()}}}}
	if _, err := json.Marshal(st); err == nil {
		t.Fatal("encoding/json took a NaN")
	}
	if _, err := st.AppendJSON(nil); err == nil {
		t.Fatal("AppendJSON took a NaN")
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	st := randomState(rand.New(rand.NewPCG(3, 4)))
	buf := make([]byte, 0, 8192)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = st.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
