package bench

import (
	"testing"
	"time"
)

// turns times two sides of a paired sample that take turns in blocks of
// pairedBlock operations: side 0 makes a block, then side 1, and so on.
// Each operation is followed by done, which ends a block when it is full.
// With one side only (paired false), side stays 0.
type turns struct {
	paired bool
	side   int // the side whose block is under way
	n      int // operations of that block so far
	spent  [2]time.Duration
	made   [2]int
	start  time.Time
}

func newTurns(paired bool) *turns { return &turns{paired: paired, start: time.Now()} }

// next is the index of the current side's next operation: how many it has
// made in all, so that both sides can make the same sequence.
func (t *turns) next() int { return t.made[t.side] + t.n }

// done counts an operation of the current side, and hands the turn to
// the other side when its block is full.
func (t *turns) done() {
	if t.n++; t.n == pairedBlock && t.paired {
		now := time.Now()
		t.spent[t.side] += now.Sub(t.start)
		t.made[t.side] += t.n
		t.start, t.side, t.n = now, 1-t.side, 0
	}
}

// stop ends the timing, on the goroutine that made the operations.
func (t *turns) stop() {
	t.spent[t.side] += time.Since(t.start)
	t.made[t.side] += t.n
	t.n = 0
}

// report, after stop, reports side 0's time per operation as ns/op and
// side 1's as otherUnit, if both sides made operations.
func (t *turns) report(b *testing.B, otherUnit string) {
	if t.made[0] > 0 && t.made[1] > 0 {
		b.ReportMetric(float64(t.spent[0].Nanoseconds())/float64(t.made[0]), "ns/op")
		b.ReportMetric(float64(t.spent[1].Nanoseconds())/float64(t.made[1]), otherUnit)
	}
}
