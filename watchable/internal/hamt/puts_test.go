package hamt

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// putAll overwrites every key below n with val as one Live.Put, and fails
// if any of them cannot be made in place.
func putAll(t *testing.T, l *Live[int, int], n, val int, stamp uint64) []Put {
	t.Helper()
	puts := make([]Put, 0, n)
	for k := range n {
		c := l.Find(k)
		p, ok := c.Put(val)
		if !ok {
			t.Fatalf("Cursor.Put refused key %d of a version nobody holds", k)
		}
		puts = append(puts, p)
	}
	return puts
}

// fill stores 0 under every key below n, one Set each, so that the nodes
// are the current version's to change in place.
func fill(l *Live[int, int], n int) {
	for k := range n {
		c := l.Find(k)
		c.Set(0, uint64(k+1))
	}
}

// TestLivePutMakesEveryStore checks what Live.Put changes, and what Cursor.Put
// refuses: an absent key, and any key once a Freeze holds the version.
func TestLivePutMakesEveryStore(t *testing.T) {
	var l Live[int, int]
	fill(&l, 500)
	puts := putAll(t, &l, 500, 7, 0)
	if got, _ := l.Get(3); got != 0 {
		t.Fatalf("a Put reached the map before Live.Put: key 3 = %d", got)
	}
	made, reuse := l.Put(puts, 900)
	if !made || !reuse {
		t.Fatalf("Live.Put on a version nobody holds = %v, %v; want true, true", made, reuse)
	}
	for k := range 500 {
		if got, _ := l.Get(k); got != 7 {
			t.Fatalf("after Live.Put key %d = %d; want 7", k, got)
		}
	}
	if l.Stamp() != 900 || l.Len() != 500 {
		t.Fatalf("after Live.Put: stamp %d, len %d; want 900, 500", l.Stamp(), l.Len())
	}
	c := l.Find(1000)
	if _, ok := c.Put(1); ok {
		t.Fatalf("Cursor.Put accepted a key that is absent")
	}
	snap, _ := l.Freeze()
	c = l.Find(3)
	if _, ok := c.Put(1); ok {
		t.Fatalf("Cursor.Put accepted a key of a frozen version")
	}
	if got, _ := snap.Get(3); got != 7 {
		t.Fatalf("the snapshot holds %d at key 3; want 7", got)
	}
}

// TestLivePutRefusedAfterFreeze finds the replacements, lets a Freeze hold
// the version, and checks that Live.Put then changes nothing.
func TestLivePutRefusedAfterFreeze(t *testing.T) {
	var l Live[int, int]
	fill(&l, 100)
	puts := putAll(t, &l, 100, 9, 0)
	snap, stamp := l.Freeze()
	if made, _ := l.Put(puts, stamp+1); made {
		t.Fatalf("Live.Put changed a frozen version")
	}
	for k := range 100 {
		if got, _ := snap.Get(k); got != 0 {
			t.Fatalf("a refused Live.Put reached the snapshot: key %d = %d", k, got)
		}
		if got, _ := l.Get(k); got != 0 {
			t.Fatalf("a refused Live.Put reached the map: key %d = %d", k, got)
		}
	}
}

// TestLivePutSettledByAReader stops a Live.Put between its announcement and
// its stores, as a writer preempted there would be: a Get must neither wait
// nor see part of it, and a Freeze must include all of it; the writer, when
// it goes on, learns that its array of puts may still be read.
func TestLivePutSettledByAReader(t *testing.T) {
	for _, reader := range []string{"Get", "Freeze"} {
		t.Run(reader, func(t *testing.T) {
			var l Live[int, int]
			fill(&l, 300)
			puts := putAll(t, &l, 300, 5, 0)
			v := l.cur.Load()
			if !v.beginMany(intent{size: 300, stamp: 777}, &puts) {
				t.Fatalf("begin refused a change to an unfrozen version")
			}
			switch reader {
			case "Get":
				if got, _ := l.Get(299); got != 5 {
					t.Fatalf("Get during a Put under way: key 299 = %d; want 5", got)
				}
			case "Freeze":
				m, stamp := l.Freeze()
				if stamp != 777 || m.Len() != 300 {
					t.Fatalf("Freeze during a Put under way: stamp %d, len %d; want 777, 300", stamp, m.Len())
				}
			}
			for k := range 300 { // every store made, before the writer went on
				if got, _ := l.Get(k); got != 5 {
					t.Fatalf("key %d = %d after a reader met the Put; want 5", k, got)
				}
			}
			if v.finish() {
				t.Fatalf("finish reported that no reader settled the Put")
			}
			if st := v.state.Load(); st&statusMask != statusFrozen || st&statusMany != 0 {
				t.Fatalf("after finish the state is %#x: want plainly frozen", st)
			}
			c := l.Find(0)
			c.Set(6, 778) // copies: the version is frozen
			if got, _ := l.Get(0); got != 6 {
				t.Fatalf("the change after the settled Put is missing: key 0 = %d", got)
			}
		})
	}
}

// TestLivePutIsAtomicToGet has a writer overwrite every key with the same,
// growing value, one Live.Put at a time, while readers Get the keys one by
// one: since a Get never sees part of a Put, the values a reader gets
// never go down (run with -race). A reader that saw the new value of one
// key and then the old value of another would fail it.
func TestLivePutIsAtomicToGet(t *testing.T) {
	var l Live[int, int]
	const keys = 2000
	fill(&l, keys)
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				k := (i*7919 + r) % keys
				v, ok := l.Get(k)
				if !ok || v < last {
					errs <- fmt.Errorf("reader %d: Get(%d) = %d, %v after a Get returned %d", r, k, v, ok, last)
					return
				}
				last = v
			}
		}()
	}
	deadline := time.Now().Add(2 * time.Second)
	stamp := l.Stamp()
	copies, puts := 0, 0
	for g := 1; g <= 300 && time.Now().Before(deadline); g++ {
		stamp++
		batch := make([]Put, 0, keys)
		for k := range keys {
			c := l.Find(k)
			p, ok := c.Put(g)
			if !ok {
				break
			}
			batch = append(batch, p)
		}
		if len(batch) == keys {
			if made, _ := l.Put(batch, stamp); made {
				puts++
				continue
			}
		}
		// A reader froze the version (meeting the last Put): this
		// generation copies, atomically too.
		tx := l.Txn()
		for k := range keys {
			tx.Set(k, g)
		}
		l.Apply(tx, stamp)
		copies++
	}
	if puts == 0 {
		t.Errorf("no generation was made by Live.Put (%d copied)", copies)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestLiveFindGroupMatchesFind checks that the spots FindGroup makes
// together are those of the cursors Find makes one by one, for keys
// present and absent, in groups of every size up to WarmGroup.
func TestLiveFindGroupMatchesFind(t *testing.T) {
	var l Live[int, int]
	var empty [WarmGroup]Spot[int, int]
	l.FindGroup([]int{1}, []uint64{Hash(1)}, empty[:1])
	if empty[0].found || empty[0].n != nil || empty[0].key != 1 {
		t.Fatalf("FindGroup in an empty map: %+v", empty[0])
	}
	fill(&l, 5000)
	for size := 1; size <= WarmGroup; size++ {
		var (
			ks [WarmGroup]int
			hs [WarmGroup]uint64
			ss [WarmGroup]Spot[int, int]
		)
		for i := range size {
			ks[i] = (size*977 + i*7919) % 7000 // about a third absent
			hs[i] = Hash(ks[i])
		}
		l.FindGroup(ks[:size], hs[:size], ss[:size])
		found := 0
		for i := range size {
			c := l.Find(ks[i])
			want, got := c.Spot(), ss[i]
			if got != want {
				t.Fatalf("group of %d, key %d: FindGroup's spot %+v differs from Find's %+v", size, ks[i], got, want)
			}
			if v, ok := got.Value(); ok != (ks[i] < 5000) || v != 0 { // fill stores 0
				t.Fatalf("group of %d, key %d: the spot's value is %d, %v", size, ks[i], v, ok)
			}
			if got.found {
				found++
			}
		}
		if found == 0 && size > 3 {
			t.Fatalf("group of %d: no key found", size)
		}
	}
}
