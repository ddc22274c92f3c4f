package main

import (
	"fmt"
	"strings"
)

// quotient is a figure ab derives in every sample that has both of its
// units: num divided by den, such as ns/op by floor-ns/op. A benchmark
// that times a reference alongside its own work (BenchmarkBatch's floor,
// the idle scenario's idle0-ns/op) reports the two seconds apart, so
// their quotient holds still where each alone drifts with the machine;
// comparing that quotient between base and head is then comparing the
// change, not the minute each ran in.
type quotient struct{ num, den string }

// parseQuotient reads -quotient's "num,den".
func parseQuotient(s string) (quotient, error) {
	num, den, ok := strings.Cut(s, ",")
	num, den = strings.TrimSpace(num), strings.TrimSpace(den)
	if !ok || num == "" || den == "" || strings.Contains(den, ",") {
		return quotient{}, fmt.Errorf("-quotient %q: want two units separated by a comma, such as ns/op,floor-ns/op", s)
	}
	return quotient{num, den}, nil
}

// unit names the derived figure in the report.
func (q quotient) unit() string { return q.num + " ÷ " + q.den }

// derive adds each quotient of qs to every result of s that reports both
// of its units and a non-zero denominator.
func derive(s samples, qs []quotient) {
	for sd := range s {
		for _, results := range s[sd] {
			for i := range results {
				m := results[i].Metrics
				for _, q := range qs {
					n, okN := m[q.num]
					d, okD := m[q.den]
					if okN && okD && d != 0 {
						m[q.unit()] = n / d
					}
				}
			}
		}
	}
}

// derived reports whether unit is a quotient's: a plain number.
func derived(unit string) bool { return strings.Contains(unit, " ÷ ") }
