package main

import (
	"fmt"
	"maps"
	"strings"

	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// pivot is a benchmark ab divides others by, sample by sample: -pivot
// lib=peer divides BenchmarkStore/lib=switchyard/N=100 by
// BenchmarkStore/lib=peer/N=100 of the same run, unit by unit. The
// side-by-side benchmarks name the library as a key of the name so that
// one invocation times ours, the peer and the floor seconds apart; their
// quotient holds still where each figure drifts, as -quotient's does
// within one line.
type pivot struct{ key, value string }

// parsePivot reads -pivot's "key=value".
func parsePivot(s string) (pivot, error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" || value == "" || strings.ContainsAny(s, "/ ") {
		return pivot{}, fmt.Errorf("-pivot %q: want one element of a benchmark name, key=value, such as lib=peer", s)
	}
	return pivot{key, value}, nil
}

// String is the pivot as the command line gives it.
func (p pivot) String() string { return p.key + "=" + p.value }

// unit names the quotient of unit by the pivot's.
func (p pivot) unit(unit string) string { return unit + " ÷ " + p.String() }

// counterpart returns the name of the benchmark name is divided by, and
// whether there is one: name has a key= element other than the pivot's.
func (p pivot) counterpart(name string) (string, bool) {
	parts := strings.Split(name, "/")
	for i, part := range parts {
		if v, ok := strings.CutPrefix(part, p.key+"="); ok {
			if v == p.value {
				return "", false
			}
			parts[i] = p.String()
			return strings.Join(parts, "/"), true
		}
	}
	return "", false
}

// derivePivots adds, to every result of s with a counterpart in the same
// run, each of its units divided by the counterpart's.
func derivePivots(s samples, ps []pivot) {
	for sd := range s {
		for _, results := range s[sd] {
			byName := make(map[string]*gobench.Result, len(results))
			for i := range results {
				byName[fmt.Sprintf("%s-%d", results[i].Name, results[i].Procs)] = &results[i]
			}
			for i := range results {
				r := &results[i]
				for _, p := range ps {
					name, ok := p.counterpart(r.Name)
					if !ok {
						continue
					}
					c := byName[fmt.Sprintf("%s-%d", name, r.Procs)]
					if c == nil {
						continue
					}
					// Collected first: r.Metrics must not grow while ranged.
					add := map[string]float64{}
					for unit, v := range r.Metrics {
						if d, ok := c.Metrics[unit]; ok && d != 0 && !derived(unit) {
							add[p.unit(unit)] = v / d
						}
					}
					maps.Copy(r.Metrics, add)
				}
			}
		}
	}
}
