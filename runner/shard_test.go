package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// ledger records the handlers that run, across every replica of a test,
// and checks the one-owner rule each time a handler starts: any other
// handler of the same item still running must belong to a term that has
// ended (its context is being cancelled; the engine let the item go).
type ledger struct {
	mu         sync.Mutex
	running    map[string]map[string]runner.Term // item -> replica -> term
	starts     map[string]int                    // item -> handler starts
	violations []string
	changes    watchable.Map[string, int] // replica -> handlers running, to wait on
	behave     func(ctx context.Context, replica, item string, run int) error
}

func newLedger() *ledger {
	return &ledger{running: map[string]map[string]runner.Term{}, starts: map[string]int{}}
}

// handler returns replica's handler: it records its run, and runs until
// its context is cancelled unless behave says otherwise.
func (l *ledger) handler(replica string) func(ctx context.Context, item string) error {
	return func(ctx context.Context, item string) error {
		term, ok := runner.TermOf(ctx)
		if !ok {
			return errors.New("no term in the handler's context")
		}
		run := l.start(replica, item, term)
		defer l.stop(replica, item)
		if l.behave != nil {
			if err := l.behave(ctx, replica, item, run); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return nil
	}
}

func (l *ledger) start(replica, item string, term runner.Term) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for other, t := range l.running[item] {
		select {
		case <-t.Done():
		default:
			l.violations = append(l.violations, fmt.Sprintf("%s started %s (token %d) while %s held it (token %d)",
				replica, item, term.Token(), other, t.Token()))
		}
	}
	if l.running[item] == nil {
		l.running[item] = map[string]runner.Term{}
	}
	if _, dup := l.running[item][replica]; dup {
		l.violations = append(l.violations, fmt.Sprintf("%s started %s twice", replica, item))
	}
	l.running[item][replica] = term
	l.starts[item]++
	l.changes.Store(replica, l.countLocked(replica))
	return l.starts[item]
}

func (l *ledger) stop(replica, item string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.running[item], replica)
	l.changes.Store(replica, l.countLocked(replica))
}

func (l *ledger) countLocked(replica string) int {
	n := 0
	for _, rs := range l.running {
		if _, ok := rs[replica]; ok {
			n++
		}
	}
	return n
}

// check fails the test for every violation recorded.
func (l *ledger) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.violations {
		t.Error(v)
	}
}

// counts returns the number of items each replica holds per the engine.
func counts(e *memEngine) map[string]int {
	out := map[string]int{}
	for _, holder := range e.holders() {
		out[holder]++
	}
	return out
}

// shardReplica is one replica running a Sharder in its own group.
type shardReplica struct {
	id string
	s  *runner.Sharder[string, int]
	p  *process
}

func startShard(t *testing.T, e *memEngine, id string, items *watchable.Map[string, int], l *ledger, opts ...runner.Option) *shardReplica {
	t.Helper()
	s := runner.Shard("shard", items.View(), func(k string) string { return k }, e.replica(id), l.handler(id), opts...)
	r := &shardReplica{id: id, s: s, p: startProcess(t, s)}
	waitClosed(t, s.Ready(), id+" ready")
	return r
}

// fill stores n items named item-00, item-01, ...
func fill(m *watchable.Map[string, int], n int) {
	m.Batch(func(b *watchable.Batch[string, int]) {
		for i := range n {
			b.Store(itemName(i), i)
		}
	})
}

func itemName(i int) string { return fmt.Sprintf("item-%02d", i) }

// waitOwned waits until every item of items is held per the engine, with
// counts that satisfy ok.
func waitOwned(t *testing.T, e *memEngine, items *watchable.Map[string, int], what string, ok func(map[string]int) bool) map[string]int {
	t.Helper()
	var last map[string]int
	deadline := time.Now().Add(patience)
	for {
		e.mu.Lock()
		changed := e.changed
		e.mu.Unlock()
		holders := e.holders()
		last = counts(e)
		if len(holders) == items.Len() && ok(last) {
			return last
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("timed out waiting for %s: %d of %d items held, counts %v", what, len(holders), items.Len(), last)
		}
	}
}

// fast keeps the policy's delays short for tests on the system clock.
var fast = []runner.Option{
	runner.WithLogger(quiet),
	runner.WithBalance(runner.Balance{Step: 5 * time.Millisecond}),
	runner.WithBackoff(10*time.Millisecond, 100*time.Millisecond),
}

func TestShardHandlesEveryItemWithItsTerm(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	fill(items, 5)
	l := newLedger()
	r := startShard(t, e, "a", items, l, fast...)

	waitOwned(t, e, items, "a to hold all", func(c map[string]int) bool { return c["a"] == 5 })
	waitFor(t, "5 handlers", func() bool { v, _ := l.changes.Load("a"); return v == 5 }, l.changes.View())
	owned := r.s.Owned().LoadAll()
	for item, holder := range e.holders() {
		o, ok := owned[item]
		e.mu.Lock()
		token := e.claims[item].token
		e.mu.Unlock()
		if holder != "a" || !ok || o.Token != token || o.Phase != runner.PhaseRunning {
			t.Errorf("%s: holder %s, Owned %+v (present %v), engine token %d", item, holder, o, ok, token)
		}
		l.mu.Lock()
		if got := l.running[item]["a"]; got == nil || got.Token() != token {
			t.Errorf("%s: the handler's TermOf is %v, want the claim with token %d", item, got, token)
		}
		l.mu.Unlock()
	}
	if st := r.s.Stats(); st.Joins != 1 || st.Claims != 5 {
		t.Errorf("Stats() = %+v, want 1 join and 5 claims", st)
	}
	l.check(t)
}

func TestShardSpreadsItemsThatArriveOneAtATime(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	l := newLedger()
	for _, id := range []string{"a", "b", "c"} {
		startShard(t, e, id, items, l, fast...)
	}
	for i := range 30 {
		items.Store(itemName(i), i)
		waitOwned(t, e, items, fmt.Sprintf("item %d to be held", i), func(map[string]int) bool { return true })
	}
	// The cap is ⌈30/3⌉+1 = 11, so nobody holds more, and nobody fewer
	// than 30-2·11 = 8.
	c := waitOwned(t, e, items, "all held within the bound", func(c map[string]int) bool {
		return c["a"] <= 11 && c["b"] <= 11 && c["c"] <= 11
	})
	t.Logf("items per replica: %v", c)
	l.check(t)
}

// TestShardTakeoverStaysWithinTheBound is the mass takeover of the issue:
// three replicas share 30 items, one dies, and the two survivors take its
// items over. Without one claim per round and the cap, the least loaded
// survivor took every freed item in one round (11/19); the bound is
// ⌈30/2⌉+1 = 16.
func TestShardTakeoverStaysWithinTheBound(t *testing.T) {
	for run := range 5 {
		t.Run(fmt.Sprint("run", run), func(t *testing.T) {
			e := newMemEngine()
			items := new(watchable.Map[string, int])
			fill(items, 30)
			l := newLedger()
			for _, id := range []string{"a", "b", "c"} {
				startShard(t, e, id, items, l, fast...)
			}
			before := waitOwned(t, e, items, "the three to share the items", func(c map[string]int) bool {
				return c["a"] > 0 && c["b"] > 0 && c["c"] > 0 && c["a"] <= 11 && c["b"] <= 11 && c["c"] <= 11
			})
			victim := []string{"a", "b", "c"}[run%3]
			e.isolate(victim)
			after := waitOwned(t, e, items, "the survivors to take everything over", func(c map[string]int) bool {
				return c[victim] == 0
			})
			for id, n := range after {
				if n > 16 {
					t.Errorf("%s holds %d items after the takeover, above the bound 16", id, n)
				}
			}
			t.Logf("before %v, after %s died: %v", before, victim, after)
			l.check(t)
		})
	}
}

func TestShardClaimsOneItemPerRound(t *testing.T) {
	e := newMemEngine()
	other, err := e.replica("other").Join(context.Background()) // a second member, holding nothing
	if err != nil {
		t.Fatal(err)
	}
	items := new(watchable.Map[string, int])
	fill(items, 10)
	clock := newFakeClock()
	l := newLedger()
	startShard(t, e, "a", items, l, runner.WithLogger(quiet), runner.WithClock(clock),
		runner.WithBalance(runner.Balance{Levels: 10, Step: time.Second}))

	// 10 items, 2 members: the cap is ⌈10/2⌉+1 = 6. Holding n items, the
	// replica is at level n·10/10 = n, and waits n seconds before its next
	// claim: one claim per round.
	for n := 1; ; n++ {
		waitHolders(t, e, fmt.Sprintf("a to hold %d", n), func(c map[string]int) bool { return c["a"] == n })
		if n == 6 {
			break
		}
		round := time.Duration(n) * time.Second
		clock.waitFor(t, round, fmt.Sprintf("the round after claim %d", n))
		clock.Advance(round - time.Millisecond)
		if got := counts(e)["a"]; got != n {
			t.Fatalf("a holds %d items before its round of %v ended, want %d", got, round, n)
		}
		clock.Advance(time.Millisecond)
	}

	// The cap stopped it: once the other member leaves, the cap is 11 and
	// it goes on, at level 6.
	if err := other.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock.waitFor(t, 6*time.Second, "the round at level 6")
	clock.Advance(6 * time.Second)
	waitHolders(t, e, "a to hold 7", func(c map[string]int) bool { return c["a"] == 7 })
	l.check(t)
}

// waitHolders waits until the numbers of items each replica holds, per the
// engine, satisfy ok.
func waitHolders(t *testing.T, e *memEngine, what string, ok func(map[string]int) bool) {
	t.Helper()
	deadline := time.After(patience)
	for {
		e.mu.Lock()
		changed := e.changed
		e.mu.Unlock()
		c := counts(e)
		if ok(c) {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s: counts %v", what, c)
		}
	}
}

func TestShardShedsAboveTheCap(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	fill(items, 10)
	l := newLedger()
	startShard(t, e, "a", items, l, fast...)
	waitOwned(t, e, items, "a alone to hold all", func(c map[string]int) bool { return c["a"] == 10 })

	// b joins: the cap becomes ⌈10/2⌉+1 = 6, a sheds what is above it, one
	// item per round, and b claims what a released.
	startShard(t, e, "b", items, l, fast...)
	c := waitOwned(t, e, items, "a to come down to the cap", func(c map[string]int) bool { return c["a"] <= 6 && c["b"] >= 4 })
	t.Logf("after b joined: %v", c)
	l.check(t)
}

func TestShardHandlerContextEnds(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	fill(items, 3)
	l := newLedger()
	r := startShard(t, e, "a", items, l, fast...)
	waitOwned(t, e, items, "a to hold all", func(c map[string]int) bool { return c["a"] == 3 })
	running := func(item string) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		_, ok := l.running[item]["a"]
		return ok
	}

	t.Run("item gone", func(t *testing.T) {
		items.Delete("item-00")
		waitFor(t, "the handler of item-00 to return", func() bool { return !running("item-00") }, l.changes.View())
		waitHolders(t, e, "item-00 released", func(map[string]int) bool { _, held := e.holders()["item-00"]; return !held })
		waitFor(t, "item-00 to leave Owned", func() bool { _, ok := r.s.Owned().Load("item-00"); return !ok }, r.s.Owned())
	})

	t.Run("claim lost", func(t *testing.T) {
		e.mu.Lock()
		token := e.claims["item-01"].token
		e.mu.Unlock()
		e.revoke("item-01")
		waitFor(t, "the handler of item-01 to return", func() bool { return !running("item-01") }, l.changes.View())
		// Vacant again: a claims it anew, with a new term.
		waitOwned(t, e, items, "item-01 held again", func(c map[string]int) bool { return c["a"] == 2 })
		waitFor(t, "item-01 handled again", func() bool { return running("item-01") }, l.changes.View())
		l.mu.Lock()
		again := l.running["item-01"]["a"].Token()
		l.mu.Unlock()
		if again <= token {
			t.Errorf("new term's token %d, want above %d", again, token)
		}
	})

	t.Run("runner stopped", func(t *testing.T) {
		r.p.stop(t)
		if running("item-01") || running("item-02") {
			t.Error("handlers still run after the runner returned")
		}
		if h := e.holders(); len(h) != 0 {
			t.Errorf("claims after the runner stopped: %v, want none (it left)", h)
		}
		e.mu.Lock()
		members := len(e.members)
		e.mu.Unlock()
		if members != 0 {
			t.Errorf("%d members after the runner stopped, want 0", members)
		}
	})
	l.check(t)
}

func TestShardHandlerFailuresAreIsolated(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	fill(items, 3)
	clock := newFakeClock()
	l := newLedger()
	l.behave = func(ctx context.Context, replica, item string, run int) error {
		if item != "item-01" {
			return nil
		}
		switch run {
		case 1:
			return errors.New("base unreachable")
		case 2:
			panic("out of cheese")
		}
		return nil
	}
	// One level: claims never wait, so the clock only paces restarts.
	r := startShard(t, e, "a", items, l, runner.WithLogger(quiet), runner.WithClock(clock),
		runner.WithBackoff(time.Second, time.Minute), runner.WithBalance(runner.Balance{Levels: 1}))
	problem := func() string { return r.p.problems("shard")["item-01"] }
	waitHolders(t, e, "a to hold all", func(c map[string]int) bool { return c["a"] == 3 })
	waitFor(t, "the failure to be reported", func() bool { return problem() == "base unreachable" }, r.p.g.Status())
	waitFor(t, "Owned to show the failure", func() bool {
		o, _ := r.s.Owned().Load("item-01")
		return o.Phase == runner.PhaseFailed && o.Err == "base unreachable"
	}, r.s.Owned())
	clock.waitFor(t, time.Second, "the restart")
	clock.Advance(time.Second)
	waitFor(t, "the panic to be reported", func() bool { return strings.Contains(problem(), "out of cheese") }, r.p.g.Status())
	clock.waitFor(t, 2*time.Second, "the second restart, after twice the backoff")
	clock.Advance(2 * time.Second)
	waitFor(t, "the problem cleared once it runs again", func() bool { return problem() == "" }, r.p.g.Status())
	waitFor(t, "item-01 running again", func() bool {
		o, _ := r.s.Owned().Load("item-01")
		return o.Phase == runner.PhaseRunning && o.Restarts == 2
	}, r.s.Owned())

	// The other items ran throughout, and the claim was kept.
	waitFor(t, "the other items' handlers to have started", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.starts["item-00"] > 0 && l.starts["item-02"] > 0
	}, l.changes.View())
	l.mu.Lock()
	for _, item := range []string{"item-00", "item-02"} {
		if l.starts[item] != 1 {
			t.Errorf("%s started %d times, want once", item, l.starts[item])
		}
	}
	l.mu.Unlock()
	if st := r.s.Stats(); st.Failures != 2 || st.Released != 0 || st.Lost != 0 {
		t.Errorf("Stats() = %+v, want 2 failures and no claim given up", st)
	}
	l.check(t)
}

func TestShardJoinsAgainAfterLosingItsMembership(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	fill(items, 4)
	l := newLedger()
	r := startShard(t, e, "a", items, l, fast...)
	waitOwned(t, e, items, "a to hold all", func(c map[string]int) bool { return c["a"] == 4 })

	e.isolate("a")
	waitFor(t, "every handler to return", func() bool { v, _ := l.changes.Load("a"); return v == 0 }, l.changes.View())
	waitFor(t, "the loss to be reported", func() bool {
		return r.p.problems("shard")[runner.ProblemMembership] != ""
	}, r.p.g.Status())
	if r.s.Owned().Len() != 0 {
		t.Errorf("Owned() holds %v after the membership was lost", r.s.Owned().LoadAll())
	}

	e.heal("a")
	waitOwned(t, e, items, "a to hold all again", func(c map[string]int) bool { return c["a"] == 4 })
	waitFor(t, "the problem to be cleared", func() bool {
		_, ok := r.p.problems("shard")[runner.ProblemMembership]
		return !ok
	}, r.p.g.Status())
	if st := r.s.Stats(); st.Joins < 2 || st.Lost != 4 {
		t.Errorf("Stats() = %+v, want 2 joins at least and 4 claims lost", st)
	}
	l.check(t)
}

func TestShardAdoptsAClaimWhoseAnswerWasLost(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	fill(items, 1)
	e.loseNextAnswer()
	l := newLedger()
	r := startShard(t, e, "a", items, l, fast...)
	waitFor(t, "the handler to run", func() bool { v, _ := l.changes.Load("a"); return v == 1 }, l.changes.View())
	if got := e.holders(); got["item-00"] != "a" {
		t.Fatalf("holders %v, want a", got)
	}
	l.mu.Lock()
	starts := l.starts["item-00"]
	l.mu.Unlock()
	if starts != 1 {
		t.Errorf("handler started %d times, want once", starts)
	}
	if st := r.s.Stats(); st.Claims != 1 {
		t.Errorf("Stats() = %+v, want the claim counted once (adopted)", st)
	}
	l.check(t)
}
