package runner_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// memEngine implements the cluster contracts in memory, faithfully: one
// engine is the shared store the replicas of a test meet in, like one etcd.
// A member's session is kept alive until the test kills it (Kill is a
// lease expiring: the member and its claims vanish in one change); claims
// are atomic create-if-absent; tokens grow with every term; each member's
// views are updated in every change, members before claims.
type memEngine struct {
	mu        sync.Mutex
	rev       int64
	members   map[string]*memMember
	claims    map[string]*memTerm // item -> term
	elections map[string]*memTerm // election -> term of the leader
	changed   chan struct{}       // closed and replaced at every change

	down     bool            // the engine cannot be reached
	isolated map[string]bool // replicas that cannot reach the engine
	loseNext bool            // the next claim succeeds but its answer is lost
}

var (
	errUnreachable = errors.New("engine unreachable")
	errMemberEnded = errors.New("membership ended")
)

func newMemEngine() *memEngine {
	return &memEngine{
		members:   map[string]*memMember{},
		claims:    map[string]*memTerm{},
		elections: map[string]*memTerm{},
		isolated:  map[string]bool{},
		changed:   make(chan struct{}),
	}
}

// setDown makes every call fail with errUnreachable (without changing what
// is held), or not.
func (e *memEngine) setDown(down bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.down = down
}

// loseNextAnswer makes the next successful claim return an error, as when
// the answer of a committed write is lost.
func (e *memEngine) loseNextAnswer() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.loseNext = true
}

// isolate cuts the replica id off from the engine: its calls fail, and
// its sessions expire (kill); heal lets it reach the engine again.
func (e *memEngine) isolate(id string) {
	e.mu.Lock()
	e.isolated[id] = true
	e.mu.Unlock()
	e.kill(id)
}

func (e *memEngine) heal(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.isolated, id)
	e.publish()
}

// unreachable reports whether replica id cannot reach the engine; e.mu is
// held.
func (e *memEngine) unreachable(id string) bool { return e.down || e.isolated[id] }

// kill expires the session of the member or candidate id: its membership,
// its claims and its leadership end in one change.
func (e *memEngine) kill(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.members[id]; m != nil {
		e.endMember(m)
	}
	for name, t := range e.elections {
		if t.holder == id {
			e.endTerm(t)
			delete(e.elections, name)
		}
	}
	e.publish()
}

// revoke ends the claim on item, as an operator deleting it would.
func (e *memEngine) revoke(item string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.claims[item]; t != nil {
		e.endTerm(t)
		delete(e.claims, item)
		e.publish()
	}
}

// holders returns who holds each item.
func (e *memEngine) holders() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]string{}
	for item, t := range e.claims {
		out[item] = t.holder
	}
	return out
}

// leader returns the holder of the election and its token.
func (e *memEngine) leader(election string) (string, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.elections[election]; t != nil {
		return t.holder, t.token
	}
	return "", 0
}

// endMember ends m and its claims; e.mu is held.
func (e *memEngine) endMember(m *memMember) {
	for item, t := range e.claims {
		if t.holder == m.id {
			e.endTerm(t)
			delete(e.claims, item)
		}
	}
	delete(e.members, m.id)
	close(m.done)
}

// endTerm closes t's Done; e.mu is held.
func (e *memEngine) endTerm(t *memTerm) {
	t.once.Do(func() { close(t.done) })
}

// publish updates every member's views, members first, and wakes waiting
// candidates; e.mu is held.
func (e *memEngine) publish() {
	e.rev++
	members := map[string]struct{}{}
	for id := range e.members {
		members[id] = struct{}{}
	}
	claims := map[string]runner.Holder{}
	for item, t := range e.claims {
		claims[item] = runner.Holder{Member: t.holder, Token: t.token}
	}
	for _, m := range e.members {
		m.members.Replace(members)
	}
	for _, m := range e.members {
		m.claims.Replace(claims)
	}
	close(e.changed)
	e.changed = make(chan struct{})
}

// replica returns the engine as the replica id sees it.
func (e *memEngine) replica(id string) memReplica { return memReplica{e: e, id: id} }

// memReplica is a ShardEngine and an Elector for one replica.
type memReplica struct {
	e  *memEngine
	id string
}

func (r memReplica) Join(ctx context.Context) (runner.Member, error) {
	e := r.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.unreachable(r.id) {
		return nil, errUnreachable
	}
	if e.members[r.id] != nil {
		return nil, fmt.Errorf("member %s is already live", r.id)
	}
	m := &memMember{e: e, id: r.id, done: make(chan struct{})}
	e.members[r.id] = m
	e.publish()
	return m, nil
}

// Campaign waits until the election named "leader" is free, and takes it.
func (r memReplica) Campaign(ctx context.Context) (runner.Term, error) {
	e := r.e
	for {
		e.mu.Lock()
		if e.unreachable(r.id) {
			e.mu.Unlock()
			return nil, errUnreachable
		}
		if e.elections["leader"] == nil {
			e.rev++
			t := &memTerm{e: e, holder: r.id, token: e.rev, election: "leader", done: make(chan struct{})}
			e.elections["leader"] = t
			e.publish()
			e.mu.Unlock()
			return t, nil
		}
		changed := e.changed
		e.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

type memMember struct {
	e       *memEngine
	id      string
	done    chan struct{}
	members watchable.Map[string, struct{}]
	claims  watchable.Map[string, runner.Holder]
}

func (m *memMember) ID() string                                    { return m.id }
func (m *memMember) Members() watchable.View[string, struct{}]     { return m.members.View() }
func (m *memMember) Claims() watchable.View[string, runner.Holder] { return m.claims.View() }
func (m *memMember) Done() <-chan struct{}                         { return m.done }
func (m *memMember) live() bool                                    { return m.e.members[m.id] == m }
func (m *memMember) Leave(ctx context.Context) error               { return m.leave() }
func (m *memMember) Claim(ctx context.Context, item string) (runner.Term, error) {
	e := m.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.unreachable(m.id) {
		return nil, errUnreachable
	}
	if !m.live() {
		return nil, errMemberEnded
	}
	if t := e.claims[item]; t != nil {
		if t.holder == m.id {
			return t, nil // ours already: an earlier answer was lost
		}
		return nil, fmt.Errorf("item %s held by %s: %w", item, t.holder, runner.ErrClaimed)
	}
	e.rev++
	t := &memTerm{e: e, holder: m.id, token: e.rev, item: item, done: make(chan struct{})}
	e.claims[item] = t
	e.publish()
	if e.loseNext {
		e.loseNext = false
		return nil, fmt.Errorf("claim %s: %w", item, errUnreachable)
	}
	return t, nil
}

func (m *memMember) leave() error {
	e := m.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.live() {
		e.endMember(m)
		e.publish()
	}
	m.members.Close()
	m.claims.Close()
	return nil
}

// memTerm is a claim on an item, or the leadership of an election.
type memTerm struct {
	e        *memEngine
	holder   string
	token    int64
	item     string // for a claim
	election string // for a leadership
	done     chan struct{}
	once     sync.Once
}

func (t *memTerm) Token() int64          { return t.token }
func (t *memTerm) Done() <-chan struct{} { return t.done }
func (t *memTerm) Resign(ctx context.Context) error {
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case t.item != "" && e.claims[t.item] == t:
		delete(e.claims, t.item)
		e.publish()
	case t.election != "" && e.elections[t.election] == t:
		delete(e.elections, t.election)
		e.publish()
	}
	e.endTerm(t)
	return nil
}
