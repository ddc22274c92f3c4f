package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// report is everything the output says.
type report struct {
	cfg     config
	trees   [2]tree
	date    time.Time // when the first run began
	elapsed time.Duration
	table   table
}

// maxDirty is how many uncommitted paths the header names.
const maxDirty = 10

// write writes r as markdown.
func (r report) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## A/B: %s against %s\n\n", r.trees[head].label(), r.trees[base].label())
	fmt.Fprintf(bw, "- base: %s\n", r.trees[base].label())
	fmt.Fprintf(bw, "- head: %s\n", r.headLine())
	fmt.Fprintf(bw, "- package: %s\n", r.cfg.pkg)
	fmt.Fprintf(bw, "- rounds: %d, each running both sides one sample, base first in odd rounds and head first in even ones\n", r.cfg.rounds)
	fmt.Fprintf(bw, "- date: %s; the rounds took %s\n", r.date.UTC().Format("2006-01-02 15:04 MST"), r.elapsed.Round(100*time.Millisecond))
	fmt.Fprintf(bw, "- reproduce: `%s`\n\n", r.command())

	if len(r.table.rows) == 0 {
		fmt.Fprintln(bw, "No benchmark reported figures on both sides.")
	} else {
		fmt.Fprintln(bw, "| benchmark | unit | base | head | head ÷ base | per round | head lower |")
		fmt.Fprintln(bw, "|---|---|--:|--:|--:|--:|--:|")
		for _, c := range r.table.rows {
			ratio, paired := "—", "—"
			if c.ratioOK {
				ratio = sig3(c.ratio)
			}
			if c.pairedOK {
				paired = formatRange(c.lo, c.hi)
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s | %d of %d |\n",
				cellText(c.name), cellText(c.unit), formatValue(c.base, c.unit), formatValue(c.head, c.unit),
				ratio, paired, c.lower, c.pairs)
		}
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "base and head are each side's median over the rounds; head ÷ base divides those medians;"+
			" per round is the lowest and the highest of head ÷ base within one round, whose two samples ran"+
			" back to back; head lower counts the rounds where head's figure was below base's.")
	}
	if len(r.table.notes) > 0 {
		fmt.Fprintln(bw)
		for _, n := range r.table.notes {
			fmt.Fprintf(bw, "- %s\n", n)
		}
	}
	return bw.Flush()
}

// headLine describes head: a commit, or the working tree with the commit
// it is on and what differs from it.
func (r report) headLine() string {
	t := r.trees[head]
	if t.rev != "" {
		return t.label()
	}
	s := "working tree"
	if t.short != "" {
		s += " on " + t.short
	}
	switch n := len(t.dirty); {
	case n == 0:
		return s + ", clean"
	case n <= maxDirty:
		return s + ", with uncommitted changes to " + strings.Join(t.dirty, ", ")
	default:
		return fmt.Sprintf("%s, with uncommitted changes to %s and %d more paths", s, strings.Join(t.dirty[:maxDirty], ", "), n-maxDirty)
	}
}

// command returns the command line that runs this comparison again, with
// the revisions as commits, since a name such as HEAD~1 moves.
func (r report) command() string {
	args := []string{"go", "run", "./bench/cmd/ab", "-base", r.trees[base].short}
	if r.cfg.head != "" {
		args = append(args, "-head", r.trees[head].short)
	}
	args = append(args, "-bench", r.cfg.bench)
	if r.cfg.pkg != defaultPkg {
		args = append(args, "-pkg", r.cfg.pkg)
	}
	args = append(args, "-rounds", strconv.Itoa(r.cfg.rounds))
	for _, q := range r.cfg.quotients {
		args = append(args, "-quotient", q.num+","+q.den)
	}
	for _, p := range r.cfg.pivots {
		args = append(args, "-pivot", p.String())
	}
	if len(r.cfg.pass) > 0 {
		args = append(append(args, "--"), r.cfg.pass...)
	}
	return shellJoin(args)
}

// cellText escapes what would end a markdown table cell.
func cellText(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
