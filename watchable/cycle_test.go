package watchable_test

import (
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// budget counts the calls of its Equal method and stops the comparison
// (DeepEqual panics when an Equal method does) once they pass a limit.
type budget struct{ calls *int }

type overBudget struct{}

func (b budget) Equal(budget) bool {
	if *b.calls++; *b.calls > 100_000 {
		panic(overBudget{})
	}
	return true
}

// equalOnBudget returns DeepEqual(x, y), and fails the test if the
// comparison makes more than 100,000 calls of budget.Equal (calls counts
// them): a comparison that remembers the pairs it met makes a handful per
// node, one walked once per path never ends.
func equalOnBudget[T any](t *testing.T, x, y T, calls *int) (eq bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(overBudget); !ok {
				panic(r)
			}
			t.Fatalf("DeepEqual made more than %d Equal calls and was still going", *calls-1)
		}
	}()
	return watchable.DeepEqual(x, y)
}

// twoWay is a node whose two references both lead back to itself.
type twoWay struct {
	A, B *twoWay
	C    budget
}

// TestDeepEqualCycleWithTwoBackEdges compares two equal one-node values
// with two references back into themselves: every level has twice as many
// paths as the one above, and DeepEqual promises to end on cycles.
func TestDeepEqualCycleWithTwoBackEdges(t *testing.T) {
	calls := 0
	x, y := &twoWay{C: budget{&calls}}, &twoWay{C: budget{&calls}}
	x.A, x.B, y.A, y.B = x, x, y, y
	if !equalOnBudget(t, x, y, &calls) {
		t.Fatal("DeepEqual of equal cyclic values = false")
	}
}

// diamond is a node of a chain in which each node's two references lead to
// the same next node: no cycle, but twice as many paths at every level.
type diamond struct {
	L, R *diamond
	V    int
	C    budget
}

func diamonds(n, last int, calls *int) *diamond {
	d := &diamond{V: last, C: budget{calls}}
	for i := range n {
		d = &diamond{L: d, R: d, V: i, C: budget{calls}}
	}
	return d
}

// TestDeepEqualSharedReferences compares chains of 1,200 diamonds, built
// apart so that no pointer is shared between the two sides: 2^1200 paths,
// which only remembering the pairs already compared gets through.
func TestDeepEqualSharedReferences(t *testing.T) {
	for _, tc := range []struct {
		name string
		last int // the bottom node's V on the second side (the first has 0)
		want bool
	}{
		{"equal", 0, true},
		{"different at the bottom", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			x, y := diamonds(1200, 0, &calls), diamonds(1200, tc.last, &calls)
			if eq := equalOnBudget(t, x, y, &calls); eq != tc.want {
				t.Fatalf("DeepEqual = %v; want %v", eq, tc.want)
			}
		})
	}
}
