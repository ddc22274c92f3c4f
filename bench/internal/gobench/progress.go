package gobench

import (
	"bytes"
	"fmt"
	"io"
)

// Progress is an io.Writer for a benchmark run's standard output that
// echoes its result lines (and the "--- SKIP"/"--- FAIL" lines under
// them) to W, each after Prefix, so that a long run shows life. go test
// writes a benchmark's name before running it and its figures after, so
// only whole lines are echoed. The zero value is not usable: W must be set.
type Progress struct {
	W       io.Writer
	Prefix  string
	partial []byte
}

// Write echoes the whole lines b completes; it never fails.
func (p *Progress) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := p.partial[:i+1]
		if bytes.HasPrefix(line, []byte("Benchmark")) || bytes.HasPrefix(bytes.TrimSpace(line), []byte("--- ")) {
			fmt.Fprintf(p.W, "%s%s", p.Prefix, line)
		}
		p.partial = p.partial[i+1:]
	}
}
