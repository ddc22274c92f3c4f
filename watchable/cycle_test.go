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

// twoWay is a node whose two references both lead back to itself.
type twoWay struct {
	A, B *twoWay
	C    budget
}

// TestDeepEqualCycleWithTwoBackEdges compares two equal one-node
// values with two references back into themselves. DeepEqual promises that
// such values are compared in finite time, but it remembers references only
// beyond trackAfter (1000) levels, and a pair found equal in one branch is
// forgotten by its sibling: every level below that depth is walked twice,
// so the work grows as 2^depth and the comparison never ends in practice
// (without the budget, it runs for hours). A handful of Equal calls per
// node is what a comparison that remembers the pairs it met would make.
func TestDeepEqualCycleWithTwoBackEdges(t *testing.T) {
	calls := 0
	x, y := &twoWay{C: budget{&calls}}, &twoWay{C: budget{&calls}}
	x.A, x.B, y.A, y.B = x, x, y, y
	var eq bool
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(overBudget); !ok {
					panic(r)
				}
				t.Fatalf("DeepEqual of a one-node cycle made more than %d Equal calls and was still going", calls-1)
			}
		}()
		eq = watchable.DeepEqual(x, y)
	}()
	if !eq {
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
			var eq bool
			func() {
				defer func() {
					if r := recover(); r != nil {
						if _, ok := r.(overBudget); !ok {
							panic(r)
						}
						t.Fatalf("DeepEqual of two diamond chains made more than %d Equal calls and was still going", calls-1)
					}
				}()
				eq = watchable.DeepEqual(x, y)
			}()
			if eq != tc.want {
				t.Fatalf("DeepEqual = %v; want %v", eq, tc.want)
			}
		})
	}
}
