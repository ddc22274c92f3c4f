package hamt

import "testing"

// TestStoreWords checks storeWords on more puts than one call of
// releaseWords makes, some of them replacing nothing: every word that has
// a put gets its value, the others keep theirs. Run without the race
// detector it tests the assembly on amd64; with it, the atomic loop.
func TestStoreWords(t *testing.T) {
	n := 2*putWordsChunk + 5
	words := make([]uint64, n)
	puts := make([]Put, n)
	for i := range n {
		words[i] = ^uint64(0)
		if i%7 == 3 {
			continue // a put that replaces nothing
		}
		puts[i] = Put{word: &words[i], val: uint64(i)*0x9E3779B97F4A7C15 + 1}
	}
	storeWords(puts)
	for i := range n {
		want := ^uint64(0)
		if i%7 != 3 {
			want = uint64(i)*0x9E3779B97F4A7C15 + 1
		}
		if words[i] != want {
			t.Fatalf("word %d = %#x after storeWords; want %#x", i, words[i], want)
		}
	}
	storeWords(nil) // nothing to do, and nothing to fail
}

// TestLivePutOfManyWords makes one Live.Put of more int overwrites than one
// call of releaseWords stores, and checks every key, and that a pointer
// map's puts, which storeWords must not make, still land.
func TestLivePutOfManyWords(t *testing.T) {
	n := 3*putWordsChunk + 1
	var l Live[int, int]
	fill(&l, n)
	puts := putAll(t, &l, n, 11, 0)
	if made, _ := l.Put(puts, uint64(n+1)); !made {
		t.Fatalf("Live.Put on a version nobody holds was refused")
	}
	for k := range n {
		if got, _ := l.Get(k); got != 11 {
			t.Fatalf("after Live.Put key %d = %d; want 11", k, got)
		}
	}

	var lp Live[int, *int]
	for k := range 100 {
		c := lp.Find(k)
		c.Set(new(int), uint64(k+1))
	}
	seven := 7
	pputs := make([]Put, 0, 100)
	for k := range 100 {
		c := lp.Find(k)
		p, ok := c.Put(&seven)
		if !ok {
			t.Fatalf("Cursor.Put refused key %d of a pointer map nobody holds", k)
		}
		pputs = append(pputs, p)
	}
	if made, _ := lp.Put(pputs, 200); !made {
		t.Fatalf("Live.Put of pointers was refused")
	}
	for k := range 100 {
		if got, _ := lp.Get(k); got != &seven {
			t.Fatalf("after Live.Put of pointers key %d = %p; want %p", k, got, &seven)
		}
	}
}
