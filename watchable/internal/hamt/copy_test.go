package hamt

import (
	"slices"
	"testing"
)

// TestCopiesAreOwnAndEqual checks copyChildren and copyEntries, which move
// a node's arrays whole outside the race detector and a word at a time
// under it: either way the copy holds what the source held, after what dst
// held already, in an array of its own.
func TestCopiesAreOwnAndEqual(t *testing.T) {
	kids := make([]*node[string, int], 32)
	for i := range kids {
		kids[i] = &node[string, int]{nodeMap: uint32(i)}
	}
	first := &node[string, int]{}
	got := copyChildren(append(make([]*node[string, int], 0, 33), first), kids)
	if len(got) != 33 || got[0] != first || !slices.Equal(got[1:], kids) {
		t.Fatalf("copyChildren: got %d children, want first then the 32 of src", len(got))
	}
	got[1] = nil
	if kids[0] == nil {
		t.Fatal("copyChildren: the copy shares src's array")
	}

	words := []entry[string, int]{{"a", 1}, {"b", 2}, {"c", 3}}
	ws := copyEntries(nil, words)
	if !slices.Equal(ws, words) {
		t.Fatalf("copyEntries of word values: %v, want %v", ws, words)
	}
	ws[0].val = 9
	if words[0].val != 1 {
		t.Fatal("copyEntries: the copy of word values shares src's array")
	}

	one, two := 1, 2
	ptrs := []entry[string, *int]{{"a", &one}, {"b", &two}}
	ps := copyEntries([]entry[string, *int]{{"z", nil}}, ptrs)
	if len(ps) != 3 || ps[0].key != "z" || !slices.Equal(ps[1:], ptrs) {
		t.Fatalf("copyEntries of pointer values: %v, want z then %v", ps, ptrs)
	}

	strs := []entry[string, string]{{"a", "x"}, {"b", "y"}}
	if ss := copyEntries(nil, strs); !slices.Equal(ss, strs) {
		t.Fatalf("copyEntries of other values: %v, want %v", ss, strs)
	}
}
