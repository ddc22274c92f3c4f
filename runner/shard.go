package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// Problem keys under which a Sharder reports through its Health, besides
// the name of each item whose handler failed.
const (
	// ProblemMembership: the engine could not be reached to join, or the
	// membership was lost.
	ProblemMembership = "membership"
	// ProblemClaims: the engine could not be reached to claim or release.
	ProblemClaims = "claims"
)

// Defaults of Balance.
const (
	DefaultLevels = 10
	DefaultStep   = 50 * time.Millisecond
)

// claimTimeout bounds one claim attempt.
const claimTimeout = 10 * time.Second

// Balance tunes how Shard spreads items over replicas. See Shard for the
// policy and docs/cluster.md for why it keeps every replica within
// ⌈T/M⌉ + 1 items.
type Balance struct {
	// Levels is the number of workload levels (DefaultLevels when zero or
	// less): a replica holding n of T items is at level ⌊n·Levels/T⌋, at
	// most Levels-1.
	Levels int
	// Step is the delay per level before a claim (DefaultStep when zero or
	// less): a replica at level l waits l·Step between noticing a vacant
	// item and claiming one, so less loaded replicas claim first. It
	// should exceed the time a claim takes to reach the other replicas.
	Step time.Duration
}

// WithBalance tunes Shard's workload levels; see Balance.
//
// It applies to Shard only; NewGroup and LeaderOnly panic when given it.
func WithBalance(b Balance) Option {
	return func(c *config) {
		c.balance = b
		c.given("WithBalance", forShard)
	}
}

// ShardStats counts what a Sharder did since it was created.
type ShardStats struct {
	Joins     int64 // memberships started
	Claims    int64 // claims won (adopted ones included)
	Conflicts int64 // claim attempts lost to another member
	Lost      int64 // claims ended by the engine: expired, or membership lost
	Released  int64 // claims given up: item gone, above the cap, or stopping
	Failures  int64 // handler errors and panics
}

// Sharder shares the items of a map among the replicas of a program, each
// item handled by one replica at a time. Create one with Shard. It is safe
// for concurrent use; it runs once at a time.
type Sharder[K comparable, V any] struct {
	name     string
	items    watchable.View[K, V]
	itemName func(K) string
	engine   ShardEngine
	handle   func(ctx context.Context, item K) error
	cfg      config
	clock    Clock
	levels   int
	step     time.Duration

	owned     watchable.Map[K, Ownership]
	ownedDone func()
	ready     chan struct{}
	readyOnce sync.Once

	joins, claims, conflicts, lost, released, failures atomic.Int64
}

// Shard returns a runner that shares the items of a map among the replicas
// that run it on the same engine, and runs handle for each item it holds.
//
// Every item of items has a name on the engine, given by itemName (which
// must give distinct names to distinct keys). The runner joins the engine
// as a member, and claims items one at a time, with Member.Claim: a claim
// succeeds for one member only. For each item it holds it runs
// handle(ctx, key) in a goroutine of its own; ctx carries the claim (see
// TermOf) and is cancelled when the claim is lost, when the item leaves the
// map, or when the runner stops. handle should run until then: when it
// returns nil the item stays held and is not handled again; when it fails
// (returns an error, or panics) the failure is reported under the item's
// name through the runner's Health and logged, and handle runs again after
// the backoff (WithBackoff). A failure never affects the other items.
//
// The policy, the same on every engine:
//
//   - Workload level: a replica holding n of the T items is at level
//     ⌊n·Levels/T⌋, and waits level × Step between noticing a vacant item
//     and claiming one (WithBalance), so that the least loaded replicas
//     claim first.
//   - One claim per round: after each claim attempt the level is computed
//     again and a new delay starts, so a replica cannot take every freed
//     item in one round.
//   - A cap: a replica never claims beyond ⌈T/M⌉ + 1 items, where M is the
//     number of members (Member.Members). Since M·(⌈T/M⌉ + 1) > T, the cap
//     leaves no item unowned once every replica counts the same members.
//   - Shedding: a replica above the cap (after members joined, or items
//     left) releases one item per round, the one it claimed last, once its
//     handler has returned.
//   - Membership lost: every handler is cancelled, and once they have all
//     returned the runner joins again as a new member.
//
// When its context is done, the runner cancels every handler, waits for
// them to return, and leaves the engine (Member.Leave), so that the others
// take the items over at once. A claim is only ever released after its
// handler has returned.
//
// The runner is ready (Readier) once it has joined and the items map, and
// the engine's views of members and claims, are initialized. Owned
// publishes the items it holds; Stats counts what it did.
//
// Each change to the items, the members or the claims costs O(T) to look
// at.
//
// Options: WithLogger, WithClock, WithBackoff, WithBalance.
func Shard[K comparable, V any](name string, items watchable.View[K, V], itemName func(K) string,
	engine ShardEngine, handle func(ctx context.Context, item K) error, opts ...Option) *Sharder[K, V] {
	cfg := newConfig("runner.Shard", forShard, opts)
	s := &Sharder[K, V]{
		name: name, items: items, itemName: itemName, engine: engine, handle: handle,
		cfg: cfg, clock: cfg.clockOrSystem(),
		levels: cfg.balance.Levels, step: cfg.balance.Step,
		ready: make(chan struct{}),
	}
	if s.levels <= 0 {
		s.levels = DefaultLevels
	}
	if s.step <= 0 {
		s.step = DefaultStep
	}
	s.ownedDone = s.owned.RegisterInitializer(name)
	return s
}

// Name returns the runner's name.
func (s *Sharder[K, V]) Name() string { return s.name }

// Ready returns a channel closed once the runner has joined the engine and
// its inputs are initialized.
func (s *Sharder[K, V]) Ready() <-chan struct{} { return s.ready }

// Owned returns the map of the items this replica holds, with their claim
// and the state of their handler. It is initialized when the runner is
// ready.
func (s *Sharder[K, V]) Owned() watchable.View[K, Ownership] { return s.owned.View() }

// Stats returns what the runner did so far.
func (s *Sharder[K, V]) Stats() ShardStats {
	return ShardStats{
		Joins: s.joins.Load(), Claims: s.claims.Load(), Conflicts: s.conflicts.Load(),
		Lost: s.lost.Load(), Released: s.released.Load(), Failures: s.failures.Load(),
	}
}

// Run joins the engine and handles the items it holds until ctx is done;
// see Shard. It returns nil.
func (s *Sharder[K, V]) Run(ctx context.Context) error {
	log := s.cfg.logger(ctx).With("runner", s.name)
	health := HealthOf(ctx)
	joins := s.cfg.newBackoff()
	for ctx.Err() == nil {
		m, err := s.engine.Join(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			health.Report(ProblemMembership, fmt.Errorf("join: %w", err))
			if !sleep(ctx, s.clock, joins.next()) {
				break
			}
			continue
		}
		joins.reset()
		health.Report(ProblemMembership, nil)
		s.joins.Add(1)
		log.Info("joined", "member", m.ID())

		r := newShardRun(s, ctx, m, log.With("member", m.ID()))
		r.serve()
		// Leave, also after a loss: that ends nothing more, but lets the
		// engine release what it kept for the membership.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ResignTimeout)
		err = m.Leave(lctx)
		cancel()
		if ctx.Err() != nil {
			if err != nil {
				log.Warn("leave failed; the claims end when the membership expires", "member", m.ID(), "error", err)
			}
			break
		}
		health.Report(ProblemMembership, fmt.Errorf("membership %s lost; joining again", m.ID()))
		log.Warn("membership lost; joining again", "member", m.ID())
	}
	return nil
}

func (s *Sharder[K, V]) markReady() {
	s.readyOnce.Do(func() {
		s.ownedDone()
		close(s.ready)
	})
}

// call runs the handler, turning a panic into a *PanicError.
func (s *Sharder[K, V]) call(ctx context.Context, k K, name string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Runner: s.name + "/" + name, Value: v, Stack: debug.Stack()}
		}
	}()
	return s.handle(ctx, k)
}

// capacity returns the cap of a replica: ⌈t/m⌉ + 1 items for t items and m
// members.
func capacity(t, m int) int {
	m = max(m, 1)
	return (t+m-1)/m + 1
}

// level returns the workload level of a replica holding n of t items.
func level(n, t, levels int) int {
	if t <= 0 || n <= 0 {
		return 0
	}
	return min(n*levels/t, levels-1)
}

// preference orders the items a member claims: rendezvous hashing of the
// member and the item, so that members prefer different items and collide
// less.
func preference(member, item string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(member))
	h.Write([]byte{0})
	h.Write([]byte(item))
	return h.Sum64()
}

// holding is one item a member holds, from its claim until its release or
// loss and the return of its handler.
type holding struct {
	name  string
	term  Term
	since time.Time
	// tctx carries the term, and is cancelled when the term ends, the item
	// is released, or the runner stops; each run of the handler has a
	// context derived from it.
	tctx    context.Context
	tcancel context.CancelFunc
	quit    chan struct{} // closed when the holding is forgotten

	running   bool      // a handler goroutine has not returned
	started   time.Time // when the handler last started
	phase     Phase
	err       string
	restarts  int
	fails     backoff
	restartAt time.Time // when a failed handler runs again
	reported  bool      // a failure is reported under name
	releasing bool      // being released: resign once the handler returned
	resigning bool      // Resign is under way
	lost      bool      // the engine ended the term
}

type handlerResult[K comparable] struct {
	key K
	err error
}

type releaseResult[K comparable] struct {
	key K
	err error
}

// shardRun is one membership's worth of a Sharder's work: the loop that
// decides, and the handlers it runs. Its fields belong to the loop's
// goroutine.
type shardRun[K comparable, V any] struct {
	s      *Sharder[K, V]
	ctx    context.Context
	m      Member
	log    *slog.Logger
	health Health

	held     map[K]*holding
	gone     map[string]int64 // item name -> token of a term of ours that ended
	conflict map[string]uint64
	running  int // handlers that have not returned
	resigns  int // resigns under way

	results  chan handlerResult[K]
	ended    chan K
	released chan releaseResult[K]
	watchers sync.WaitGroup

	roundAt  time.Time // when the pending round ends; zero: none
	retryAt  time.Time // no claim before, after an engine error
	claimErr backoff
	timerAt  time.Time
	timer    <-chan time.Time
}

func newShardRun[K comparable, V any](s *Sharder[K, V], ctx context.Context, m Member, log *slog.Logger) *shardRun[K, V] {
	return &shardRun[K, V]{
		s: s, ctx: ctx, m: m, log: log, health: HealthOf(ctx),
		held:     map[K]*holding{},
		gone:     map[string]int64{},
		conflict: map[string]uint64{},
		results:  make(chan handlerResult[K]),
		ended:    make(chan K),
		released: make(chan releaseResult[K]),
		claimErr: s.cfg.newBackoff(),
	}
}

// serve runs the membership until ctx is done or the membership is lost,
// and returns once every handler has returned.
func (r *shardRun[K, V]) serve() {
	defer r.shutdown()
	for _, ch := range []<-chan struct{}{r.s.items.Initialized(), r.m.Members().Initialized(), r.m.Claims().Initialized()} {
		select {
		case <-ch:
		case <-r.ctx.Done():
			return
		case <-r.m.Done():
			return
		}
	}
	r.s.markReady()

	nctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	changed := make(chan struct{}, 1)
	r.s.items.Notify(nctx, changed)
	r.m.Members().Notify(nctx, changed)
	r.m.Claims().Notify(nctx, changed)

	for {
		r.reconcile()
		select {
		case <-r.ctx.Done():
			return
		case <-r.m.Done():
			return
		case <-changed:
		case res := <-r.results:
			r.handlerReturned(res)
		case k := <-r.ended:
			r.termEnded(k)
		case res := <-r.released:
			r.releaseDone(res)
		case <-r.timer:
			r.timer, r.timerAt = nil, time.Time{}
		}
	}
}

// reconcile looks at the items, members and claims, and acts: releases
// the items that left, restarts failed handlers that are due, sheds or
// claims one item when a round is due, and sets the timer for what is
// pending.
func (r *shardRun[K, V]) reconcile() {
	// Each pass claims at most one item; another pass follows at once only
	// when the next round is due at once (level 0), for at most as many
	// passes as there are items.
	for range r.s.items.Len() + 1 {
		if !r.pass() {
			break
		}
	}
	r.setTimer()
}

// pass makes one pass of reconcile, and reports whether another one should
// follow at once.
func (r *shardRun[K, V]) pass() bool {
	now := r.s.clock.Now()
	items := r.s.items.State()
	claims := r.m.Claims().State()
	me := r.m.ID()

	names := make(map[string]K, items.Len())
	for k := range items.Keys() {
		names[r.s.itemName(k)] = k
	}
	for k, h := range r.held {
		if _, ok := items.Get(k); !ok && !h.releasing && !h.lost {
			r.log.Info("item gone; releasing it", "item", h.name)
			r.release(k, h)
		}
	}
	for k, h := range r.held {
		if h.phase == PhaseFailed && !h.running && !h.releasing && !h.lost && !now.Before(h.restartAt) {
			h.restarts++
			r.start(k, h)
		}
	}
	for name, token := range r.gone {
		// Forget an ended term of ours once the claims show another in its
		// place, or the item is gone. While the claims show it, or show
		// nothing yet (they may lag behind), it must not be adopted.
		c, claimed := claims.Get(name)
		_, listed := names[name]
		if !listed || (claimed && (c.Member != me || c.Token != token)) {
			delete(r.gone, name)
		}
	}
	for name, rev := range r.conflict {
		if rev != r.m.Claims().Revision() {
			delete(r.conflict, name)
		}
	}

	// Claims of ours this run does not know, as after a claim whose answer
	// was lost: adopt them (they count toward the cap already).
	mine := len(r.held)
	var adopt []string
	var adoptFrom []Holder
	for name, c := range claims.All() {
		if c.Member != me || r.gone[name] == c.Token {
			continue
		}
		if k, ok := names[name]; ok && r.held[k] != nil {
			continue
		}
		mine++
		adopt = append(adopt, name)
		adoptFrom = append(adoptFrom, c)
	}
	if len(adopt) > 0 && !now.Before(r.retryAt) {
		r.adopt(adopt[0], adoptFrom[0], names)
		return true
	}

	t := items.Len()
	cap := capacity(t, r.m.Members().Len())
	switch {
	case mine > cap:
		if r.resigns > 0 || r.releasingCount() > 0 {
			r.roundAt = time.Time{}
			return false
		}
		if !r.roundDue(now, mine, t) {
			return false
		}
		if k, h := r.newest(); h != nil {
			r.log.Info("above the cap; releasing an item", "item", h.name, "held", mine, "cap", cap)
			r.release(k, h)
		}
		return false
	case mine < cap:
		name, ok := r.pick(names, claims, me)
		if !ok {
			r.roundAt = time.Time{}
			return false
		}
		if now.Before(r.retryAt) || !r.roundDue(now, mine, t) {
			return false
		}
		r.claim(name, names[name])
		return r.roundAt.IsZero()
	default:
		r.roundAt = time.Time{}
		return false
	}
}

// roundDue starts a round if none is pending, and reports whether the
// pending one is over; a round lasts level × Step. Acting on a due round
// ends it.
func (r *shardRun[K, V]) roundDue(now time.Time, mine, t int) bool {
	if r.roundAt.IsZero() {
		r.roundAt = now.Add(time.Duration(level(mine, t, r.s.levels)) * r.s.step)
	}
	if now.Before(r.roundAt) {
		return false
	}
	r.roundAt = time.Time{}
	return true
}

// pick returns the vacant item this member prefers, if there is one.
func (r *shardRun[K, V]) pick(names map[string]K, claims watchable.State[string, Holder], me string) (string, bool) {
	var best string
	var bestScore uint64
	found := false
	for name, k := range names {
		if _, claimed := claims.Get(name); claimed {
			continue
		}
		if r.held[k] != nil {
			continue // ours, the claims map has not caught up yet
		}
		if _, ok := r.conflict[name]; ok {
			continue
		}
		if score := preference(me, name); !found || score > bestScore {
			best, bestScore, found = name, score, true
		}
	}
	return best, found
}

// claim makes one claim attempt for item name (key k).
func (r *shardRun[K, V]) claim(name string, k K) {
	ctx, cancel := context.WithTimeout(r.ctx, claimTimeout)
	term, err := r.m.Claim(ctx, name)
	cancel()
	switch {
	case err == nil:
		r.claimErr.reset()
		r.health.Report(ProblemClaims, nil)
		r.s.claims.Add(1)
		r.hold(k, name, term)
	case isClaimed(err):
		r.s.conflicts.Add(1)
		r.conflict[name] = r.m.Claims().Revision()
	case r.ctx.Err() != nil || isDone(r.m.Done()):
	default:
		r.health.Report(ProblemClaims, fmt.Errorf("claim %s: %w", name, err))
		r.retryAt = r.s.clock.Now().Add(r.claimErr.next())
	}
}

// adopt claims again an item the claims map says this member holds, to get
// its Term; one whose item has left the map is released at once.
func (r *shardRun[K, V]) adopt(name string, seen Holder, names map[string]K) {
	ctx, cancel := context.WithTimeout(r.ctx, claimTimeout)
	term, err := r.m.Claim(ctx, name)
	cancel()
	switch {
	case err == nil:
	case isClaimed(err):
		r.gone[name] = seen.Token // not ours any more: the claims map lags
		return
	default:
		if r.ctx.Err() == nil && !isDone(r.m.Done()) {
			r.health.Report(ProblemClaims, fmt.Errorf("adopt %s: %w", name, err))
		}
		r.retryAt = r.s.clock.Now().Add(r.claimErr.next())
		return
	}
	r.claimErr.reset()
	r.s.claims.Add(1)
	k, ok := names[name]
	if !ok {
		r.gone[name] = term.Token()
		resign(r.ctx, term, r.log)
		r.s.released.Add(1)
		return
	}
	r.log.Info("adopted a claim of ours", "item", name, "token", term.Token())
	r.hold(k, name, term)
}

// hold starts holding item k under term, and its handler.
func (r *shardRun[K, V]) hold(k K, name string, term Term) {
	tctx, tcancel := context.WithCancel(withTerm(r.ctx, term))
	h := &holding{
		name: name, term: term, since: r.s.clock.Now(),
		tctx: tctx, tcancel: tcancel, quit: make(chan struct{}),
		fails: r.s.cfg.newBackoff(),
	}
	r.held[k] = h
	r.watchers.Add(1)
	go func() {
		defer r.watchers.Done()
		select {
		case <-term.Done():
			tcancel()
			select {
			case r.ended <- k:
			case <-h.quit:
			}
		case <-h.quit:
		}
	}()
	r.log.Debug("claimed", "item", name, "token", term.Token())
	r.start(k, h)
}

// start runs the handler of k.
func (r *shardRun[K, V]) start(k K, h *holding) {
	if h.reported {
		r.health.Report(h.name, nil)
		h.reported = false
	}
	h.running, h.started, h.phase = true, r.s.clock.Now(), PhaseRunning
	r.running++
	r.publish(k, h)
	hctx := h.tctx
	go func() {
		err := r.s.call(hctx, k, h.name)
		r.results <- handlerResult[K]{key: k, err: err}
	}()
}

func (r *shardRun[K, V]) publish(k K, h *holding) {
	r.s.owned.Store(k, Ownership{Token: h.term.Token(), Since: h.since, Phase: h.phase, Err: h.err, Restarts: h.restarts})
}

func (r *shardRun[K, V]) handlerReturned(res handlerResult[K]) {
	r.running--
	h := r.held[res.key]
	h.running = false
	switch {
	case h.releasing:
		r.resign(res.key, h)
	case h.lost:
		r.forget(res.key, h)
	case h.tctx.Err() != nil:
		// Stopping: shutdown forgets it.
	case res.err == nil:
		h.phase = PhaseStopped
		r.publish(res.key, h)
		r.log.Info("handler returned; keeping the claim", "item", h.name)
	default:
		r.s.failures.Add(1)
		now := r.s.clock.Now()
		if now.Sub(h.started) > h.fails.max {
			h.fails.reset() // it ran well for a while before failing
		}
		h.phase, h.err = PhaseFailed, res.err.Error()
		h.restartAt = now.Add(h.fails.next())
		h.reported = true
		r.publish(res.key, h)
		r.health.Report(h.name, res.err)
		r.log.Error("handler failed; restarting it after the backoff", "item", h.name, "error", res.err, "restart_at", h.restartAt)
	}
}

// release gives item k up: cancels its handler, and resigns once it has
// returned.
func (r *shardRun[K, V]) release(k K, h *holding) {
	h.releasing = true
	h.tcancel()
	if !h.running {
		r.resign(k, h)
	}
}

func (r *shardRun[K, V]) releasingCount() int {
	n := 0
	for _, h := range r.held {
		if h.releasing {
			n++
		}
	}
	return n
}

func (r *shardRun[K, V]) resign(k K, h *holding) {
	if h.resigning {
		return
	}
	h.resigning = true
	r.resigns++
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), ResignTimeout)
		defer cancel()
		r.released <- releaseResult[K]{key: k, err: h.term.Resign(ctx)}
	}()
}

func (r *shardRun[K, V]) releaseDone(res releaseResult[K]) {
	r.resigns--
	h := r.held[res.key]
	if res.err != nil {
		r.log.Warn("release failed; the claim ends when it expires", "item", h.name, "error", res.err)
	}
	r.s.released.Add(1)
	r.forget(res.key, h)
}

// termEnded handles the end of k's term, seen by its watcher.
func (r *shardRun[K, V]) termEnded(k K) {
	h := r.held[k]
	if h == nil || h.releasing {
		return // our own release; releaseDone forgets it
	}
	h.lost = true
	r.s.lost.Add(1)
	r.s.owned.Delete(k)
	r.log.Warn("claim lost", "item", h.name, "token", h.term.Token())
	if !h.running {
		r.forget(k, h)
	}
}

// forget drops the holding of k, whose term has ended and whose handler
// has returned.
func (r *shardRun[K, V]) forget(k K, h *holding) {
	h.tcancel()
	close(h.quit)
	delete(r.held, k)
	r.gone[h.name] = h.term.Token()
	r.s.owned.Delete(k)
	if h.reported {
		r.health.Report(h.name, nil)
	}
}

// newest returns the holding claimed last that is not being released.
func (r *shardRun[K, V]) newest() (K, *holding) {
	var key K
	var newest *holding
	for k, h := range r.held {
		if h.releasing || h.lost {
			continue
		}
		if newest == nil || h.since.After(newest.since) || (h.since.Equal(newest.since) && h.term.Token() > newest.term.Token()) {
			key, newest = k, h
		}
	}
	return key, newest
}

// setTimer arms the timer for the earliest of the pending round, the
// retry after an engine error, and the restart of a failed handler.
func (r *shardRun[K, V]) setTimer() {
	var at time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	earliest(r.roundAt)
	if r.retryAt.After(r.s.clock.Now()) {
		earliest(r.retryAt)
	}
	for _, h := range r.held {
		if h.phase == PhaseFailed && !h.running && !h.releasing && !h.lost {
			earliest(h.restartAt)
		}
	}
	if at.IsZero() {
		r.timer, r.timerAt = nil, time.Time{}
		return
	}
	if at.Equal(r.timerAt) && r.timer != nil {
		return
	}
	r.timerAt = at
	r.timer = r.s.clock.After(at.Sub(r.s.clock.Now()))
}

// shutdown cancels every handler and waits for them, and for the resigns
// under way, to return. The membership's claims end with it (Leave, or
// loss), so nothing is resigned here.
func (r *shardRun[K, V]) shutdown() {
	for _, h := range r.held {
		h.tcancel()
	}
	warn := r.s.clock.After(stuckWarning)
	for r.running > 0 || r.resigns > 0 {
		select {
		case res := <-r.results:
			r.running--
			r.held[res.key].running = false
		case res := <-r.released:
			r.resigns--
			r.s.released.Add(1)
			r.held[res.key].resigning = false
		case <-r.ended:
		case <-warn:
			var stuck []string
			for _, h := range r.held {
				if h.running {
					stuck = append(stuck, h.name)
				}
			}
			r.log.Warn("handlers have not returned since they were cancelled", "items", stuck, "after", stuckWarning)
			warn = r.s.clock.After(stuckWarning)
		}
	}
	for k, h := range r.held {
		switch {
		case h.lost || h.releasing:
			// counted already, or by the release under way
		case r.ctx.Err() != nil:
			r.s.released.Add(1) // Leave releases it
		default:
			r.s.lost.Add(1) // with the membership
		}
		r.forget(k, h)
	}
	r.watchers.Wait()
}

// stuckWarning is how often shutdown names the handlers it still waits for.
const stuckWarning = 10 * time.Second

func isClaimed(err error) bool { return errors.Is(err, ErrClaimed) }
