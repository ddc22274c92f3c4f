package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// side is one of the two builds compared.
type side int

const (
	base side = iota
	head
)

func (s side) String() string {
	if s == base {
		return "base"
	}
	return "head"
}

// runner runs side's benchmark binary once with args and returns what it
// wrote to standard output. The round loop takes one so that its tests
// can check the order of the runs without building anything.
type runner func(ctx context.Context, s side, args []string) ([]byte, error)

// samples holds each side's results by round: samples[side][round].
type samples [2][][]gobench.Result

// order returns the sides in the order round (counted from 0) runs them.
// Alternating who goes first keeps a systematic advantage of going first
// or second (a warmer cache, a machine just speeding up or slowing down)
// from favouring one side in every pair.
func order(round int) [2]side {
	if round%2 == 0 {
		return [2]side{base, head}
	}
	return [2]side{head, base}
}

// loop is the rounds of one comparison.
type loop struct {
	rounds int
	args   []string  // every invocation's arguments
	raw    io.Writer // if not nil, receives each invocation's output and a comment line after it
	log    io.Writer // receives a line before each invocation
}

// run runs each side once a round, in the order order gives, and returns
// their results by side and round.
func (l loop) run(ctx context.Context, run runner) (samples, error) {
	var s samples
	for sd := range s {
		s[sd] = make([][]gobench.Result, l.rounds)
	}
	for round := range l.rounds {
		for _, sd := range order(round) {
			fmt.Fprintf(l.log, "ab: round %d of %d: %s\n", round+1, l.rounds, sd)
			out, err := run(ctx, sd, l.args)
			if err != nil {
				return samples{}, fmt.Errorf("round %d, %s: %w", round+1, sd, err)
			}
			if l.raw != nil {
				if err := writeRaw(l.raw, out, sd, round, l.args); err != nil {
					return samples{}, err
				}
			}
			rs, err := gobench.Parse(bytes.NewReader(out))
			if err != nil {
				return samples{}, fmt.Errorf("parsing the output of %s in round %d: %w", sd, round+1, err)
			}
			s[sd][round] = rs
		}
	}
	return s, nil
}

// writeRaw writes one invocation's output and the comment line that says
// which it was. benchstat ignores such lines, so the file stays its input.
func writeRaw(w io.Writer, out []byte, sd side, round int, args []string) error {
	// The comment must start a line of its own, or it hides the last
	// result line from benchstat.
	sep := ""
	if len(out) > 0 && out[len(out)-1] != '\n' {
		sep = "\n"
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("writing the raw output: %w", err)
	}
	if _, err := fmt.Fprintf(w, "%s# ab: %s, round %d: %s.test %s\n", sep, sd, round+1, sd, shellJoin(args)); err != nil {
		return fmt.Errorf("writing the raw output: %w", err)
	}
	return nil
}

// empty reports whether no run of either side reported a benchmark, not
// even one that skipped: the pattern selects nothing.
func (s samples) empty() bool {
	for _, rounds := range s {
		for _, rs := range rounds {
			if len(rs) > 0 {
				return false
			}
		}
	}
	return true
}
