package bench

import (
	"flag"
	"testing"
)

// TestScenariosGoOnWhereThePreviousStopped checks the write numbering of
// the scenarios that loop with b.Loop on a filled map (see ops): each run
// reserves as many write indexes as it made writes, so the next run on the
// same map goes on from there, and the map holds the values of the last
// writes.
func TestScenariosGoOnWhereThePreviousStopped(t *testing.T) {
	const n, count = 100, 150
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "150x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	dropFilled()
	defer dropFilled()

	m := filled(libNames[0], ints, n)
	keys, ring := keysFor(n), ints.ring()
	for _, sc := range []struct {
		name string
		run  func(b *testing.B)
	}{
		{"Store", func(b *testing.B) { benchStore(b, m, ints, n, 0) }},
		{"Store with a subscriber", func(b *testing.B) { benchStore(b, m, ints, n, 1) }},
		{"latency", func(b *testing.B) { benchLatency(b, m, ints, n) }},
		{"Load", func(b *testing.B) { benchLoad(b, m, keys) }},
		{"Store again", func(b *testing.B) { benchStore(b, m, ints, n, 0) }},
	} {
		before := filledMap.next
		r := testing.Benchmark(sc.run)
		if r.N != count {
			t.Fatalf("%s: testing.Benchmark ran %d iterations; want %d, from -test.benchtime", sc.name, r.N, count)
		}
		if got := filledMap.next - before; got != count {
			t.Errorf("%s: %d write indexes reserved for %d iterations; want as many", sc.name, got, count)
		}
	}
	// The last write of the last run, index next-1, left its value at its key.
	last := filledMap.next - 1
	if got, ok := m.Load(keys[last%n]); !ok || got != ring[last%ringSize] {
		t.Errorf("key %s holds %d, %v; want %d, written by the last Store", keys[last%n], got, ok, ring[last%ringSize])
	}
}
