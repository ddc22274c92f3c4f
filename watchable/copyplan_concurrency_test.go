package watchable_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// Types used by TestPlansAreBuiltConcurrently alone, so that their plans are
// built there, by goroutines racing each other.
type (
	raceLeaf struct {
		Tags []string
		At   time.Time
	}
	raceNode struct {
		Name  string
		Leafs []*raceLeaf
		Index map[string]raceLeaf
		Next  *raceNode
		Extra any
	}
	raceArray [3]map[string][]int
)

func TestPlansAreBuiltConcurrently(t *testing.T) {
	fresh := func(i int) *raceNode {
		leaf := raceLeaf{Tags: []string{fmt.Sprint(i)}, At: time.Unix(int64(i), 0)}
		return &raceNode{
			Name:  "n",
			Leafs: []*raceLeaf{&leaf},
			Index: map[string]raceLeaf{"a": leaf},
			Next:  &raceNode{Name: "next", Extra: raceArray{{"x": {i}}}},
			Extra: []any{leaf, &leaf, map[string]any{"i": i}},
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var m watchable.Map[string, any]
			for i := range 20 {
				v := fresh(g*100 + i)
				c := watchable.DeepCopy(v)
				if !watchable.DeepEqual(v, c) || watchable.DeepEqual(v, fresh(-1)) {
					errs <- fmt.Errorf("goroutine %d: copy %d compares wrongly", g, i)
					return
				}
				m.Store("v", v)                                 // any holding *raceNode
				m.Store("a", raceArray{{"k": {g}}})             // any holding an array of maps
				m.Store("l", []raceLeaf{{Tags: []string{"t"}}}) // any holding a slice of structs
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
