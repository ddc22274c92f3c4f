package main

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// figure is one side's value of one benchmark in one unit in one round;
// ok is false where that round did not report it (the benchmark skipped,
// failed, or did not exist on that side).
type figure struct {
	v  float64
	ok bool
}

// comparison is one row of the report: a benchmark's figures in one unit,
// base against head.
type comparison struct {
	name, unit string
	// base and head are each side's median over the rounds that reported
	// the figure.
	base, head float64
	// ratio is head ÷ base of the medians; ratioOK is false when base's
	// median is zero.
	ratio   float64
	ratioOK bool
	// lo and hi bound head_i ÷ base_i over the paired rounds with base_i
	// not zero; pairedOK is false when there is no such round.
	lo, hi   float64
	pairedOK bool
	// lower counts the paired rounds with head_i < base_i, of pairs: the
	// rounds where both sides reported the figure.
	lower, pairs int
}

// compare computes the row of one benchmark and unit from each side's
// figures, indexed by round. Pairing by round is the point: the two
// figures of a round were taken seconds apart, so the machine's drift over
// minutes, which moves both sides' medians, mostly cancels in their
// quotient.
func compare(name, unit string, base, head []figure) comparison {
	c := comparison{name: name, unit: unit}
	c.base = median(values(base))
	c.head = median(values(head))
	if c.base != 0 {
		c.ratio, c.ratioOK = c.head/c.base, true
	}
	for i := range min(len(base), len(head)) {
		b, h := base[i], head[i]
		if !b.ok || !h.ok {
			continue
		}
		c.pairs++
		if h.v < b.v {
			c.lower++
		}
		if b.v == 0 {
			continue
		}
		q := h.v / b.v
		if !c.pairedOK {
			c.lo, c.hi, c.pairedOK = q, q, true
			continue
		}
		c.lo, c.hi = min(c.lo, q), max(c.hi, q)
	}
	return c
}

// values returns the figures that were reported.
func values(fs []figure) []float64 {
	var out []float64
	for _, f := range fs {
		if f.ok {
			out = append(out, f.v)
		}
	}
	return out
}

// median returns the middle of vs, or the mean of the two middle values
// when there is an even number of them; 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// formatValue prints v in unit: times per operation in the largest of
// ns, µs, ms and s that keeps them at 1 or more, a quotient (see
// -quotient) as a plain number, anything else as a number followed by its
// unit.
func formatValue(v float64, unit string) string {
	if derived(unit) {
		return sig3(v)
	}
	if !strings.HasSuffix(unit, "ns/op") {
		return sig3(v) + " " + unit
	}
	scale := []string{"ns", "µs", "ms", "s"}
	i := 0
	for ; i < len(scale)-1 && math.Abs(v) >= 1000; i++ {
		v /= 1000
	}
	// 999.7 ns rounds up to "1000 ns": say 1.00 µs instead.
	if i < len(scale)-1 && sig3(v) == "1000" {
		v /= 1000
		i++
	}
	return sig3(v) + " " + scale[i]
}

// sig3 prints v to three significant figures without an exponent; values
// of 1000 or more keep all their integer digits, which a table reads more
// easily than 1.36e+06.
func sig3(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	// The position of the leading digit decides how many decimals make
	// three figures: two for 1.23, none for 123.
	lead := int(math.Floor(math.Log10(math.Abs(v))))
	decimals := max(2-lead, 0)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	// Rounding may carry into a new leading digit (9.996 → 10.00), one
	// figure too many.
	if r, _ := strconv.ParseFloat(s, 64); decimals > 0 && math.Abs(r) >= math.Pow10(lead+1) {
		s = strconv.FormatFloat(v, 'f', decimals-1, 64)
	}
	return s
}

// formatRange prints the lowest and highest paired quotient.
func formatRange(lo, hi float64) string {
	return fmt.Sprintf("%s–%s", sig3(lo), sig3(hi))
}

// table is what the report shows: a row for each benchmark and unit both
// sides reported, then a note for each benchmark or unit only one side
// did.
type table struct {
	rows  []comparison
	notes []string
}

// benchKey tells benchmarks apart: -test.cpu=1,2 runs each benchmark once
// for each GOMAXPROCS, under one name.
type benchKey struct {
	name  string
	procs int
}

// sideFigures is one side's figures of one benchmark: by unit, one a
// round; skipped is why it skipped, when it did in some round.
type sideFigures struct {
	units   map[string][]figure
	skipped string
}

// tabulate pairs the two sides' results by benchmark, unit and round.
func tabulate(s samples) table {
	var order []benchKey
	seen := map[benchKey]bool{}
	procs := map[int]bool{}
	var figs [2]map[benchKey]*sideFigures
	for sd := range figs {
		figs[sd] = map[benchKey]*sideFigures{}
		for round, results := range s[sd] {
			for _, r := range results {
				k := benchKey{r.Name, r.Procs}
				procs[r.Procs] = true
				if !seen[k] {
					seen[k] = true
					order = append(order, k)
				}
				f := figs[sd][k]
				if f == nil {
					f = &sideFigures{units: map[string][]figure{}}
					figs[sd][k] = f
				}
				if r.Skipped != "" {
					f.skipped = r.Skipped
					continue
				}
				for unit, v := range r.Metrics {
					if f.units[unit] == nil {
						f.units[unit] = make([]figure, len(s[sd]))
					}
					f.units[unit][round] = figure{v: v, ok: true}
				}
			}
		}
	}

	var t table
	for _, k := range order {
		name := k.name
		if len(procs) > 1 {
			name = fmt.Sprintf("%s-%d", k.name, k.procs)
		}
		b, h := figs[base][k], figs[head][k]
		switch {
		case measured(b) && measured(h):
		case measured(b):
			t.notes = append(t.notes, onlyOne(name, base, h))
			continue
		case measured(h):
			t.notes = append(t.notes, onlyOne(name, head, b))
			continue
		default:
			t.notes = append(t.notes, fmt.Sprintf("%s skipped on both sides: %s", name, whyBoth(b, h)))
			continue
		}
		for _, unit := range units(b, h) {
			switch bf, hf := b.units[unit], h.units[unit]; {
			case bf != nil && hf != nil:
				t.rows = append(t.rows, compare(name, unit, bf, hf))
			case bf != nil:
				t.notes = append(t.notes, fmt.Sprintf("%s: only base reported %s", name, unit))
			default:
				t.notes = append(t.notes, fmt.Sprintf("%s: only head reported %s", name, unit))
			}
		}
	}
	return t
}

func measured(f *sideFigures) bool { return f != nil && len(f.units) > 0 }

// onlyOne is the note for a benchmark that only side sd measured; other is
// the other side's figures, nil if it never ran the benchmark.
func onlyOne(name string, sd side, other *sideFigures) string {
	note := fmt.Sprintf("%s ran only in %s", name, sd)
	if other != nil && other.skipped != "" {
		note += fmt.Sprintf(" (%s skipped it: %s)", 1-sd, other.skipped)
	}
	return note
}

func whyBoth(b, h *sideFigures) string {
	if b.skipped == h.skipped {
		return b.skipped
	}
	return fmt.Sprintf("base: %s; head: %s", b.skipped, h.skipped)
}

// units returns the units of both sides in the order go test prints them:
// ns/op, the benchmark's own metrics by name, then B/op and allocs/op.
func units(b, h *sideFigures) []string {
	set := map[string]bool{}
	for u := range b.units {
		set[u] = true
	}
	for u := range h.units {
		set[u] = true
	}
	rank := func(u string) int {
		switch u {
		case "ns/op":
			return 0
		case "B/op":
			return 2
		case "allocs/op":
			return 3
		}
		return 1
	}
	out := slices.Collect(maps.Keys(set))
	slices.SortFunc(out, func(a, b string) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}
