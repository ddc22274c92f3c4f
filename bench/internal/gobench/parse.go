package gobench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Result is one benchmark line of `go test -bench` output.
type Result struct {
	// Name is the full benchmark name without the GOMAXPROCS suffix, such as
	// "BenchmarkStore/lib=peer/val=int/N=100/S=8".
	Name string
	// Procs is the GOMAXPROCS suffix (1 when there is none).
	Procs int
	// Iterations is b.N.
	Iterations int
	// Metrics maps a unit ("ns/op", "B/op", "heap-MB") to its value.
	Metrics map[string]float64
	// Skipped holds the reason when the benchmark was skipped instead.
	Skipped string
	// Pkg is the package directory the benchmark ran in. Parse leaves it
	// empty: the caller knows which package it ran.
	Pkg string
}

var (
	benchLine = regexp.MustCompile(`^(Benchmark\S*?)(?:-(\d+))?\s+(\d+)\s+(.*)$`)
	skipLine  = regexp.MustCompile(`^\s*--- SKIP: (Benchmark\S*?)(?:-(\d+))?(?:\s|$)`)
)

// Parse reads `go test -bench` output and returns its results in order.
// Lines that are not results (headers, PASS, log output) are ignored,
// except that a skipped benchmark becomes a result with Skipped set to the
// first line of its log output.
func Parse(r io.Reader) ([]Result, error) {
	var out []Result
	skipped := -1 // index in out of a skip whose reason is the next line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if skipped >= 0 {
			if reason := strings.TrimSpace(text); reason != "" && !strings.HasPrefix(reason, "---") {
				out[skipped].Skipped = reason
				skipped = -1
				continue
			}
			skipped = -1
		}
		if m := skipLine.FindStringSubmatch(text); m != nil {
			out = append(out, Result{Name: m[1], Procs: procs(m[2]), Skipped: "skipped"})
			skipped = len(out) - 1
			continue
		}
		m := benchLine.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[3])
		if err != nil {
			return nil, fmt.Errorf("line %d: iterations %q: %w", line, m[3], err)
		}
		fields := strings.Fields(m[4])
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("line %d: %q: values and units do not pair up", line, text)
		}
		res := Result{Name: m[1], Procs: procs(m[2]), Iterations: n, Metrics: make(map[string]float64, len(fields)/2)}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q for %s: %w", line, fields[i], fields[i+1], err)
			}
			res.Metrics[fields[i+1]] = v
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading benchmark output: %w", err)
	}
	return out, nil
}

func procs(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return 1
}
