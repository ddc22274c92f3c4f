package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// ErrIdentityInUse is returned by ShardEngine.Join when a live member has
// the same identity (until its session expires, after a crash).
var ErrIdentityInUse = errors.New("identity in use by a live member")

// ShardEngine is the engine of runner.Shard on etcd: members and their
// claims under one key prefix. It is safe for concurrent use.
type ShardEngine struct {
	client  *clientv3.Client
	prefix  string
	members string // <prefix>/members/
	claims  string // <prefix>/claims/
	cfg     config
	log     *slog.Logger
}

var _ runner.ShardEngine = (*ShardEngine)(nil)

// NewShardEngine returns the engine for the replicas that share items under
// prefix (for example "/myapp/shards"). Options: WithTTL, WithIdentity,
// WithLogger.
func NewShardEngine(c *clientv3.Client, prefix string, opts ...Option) *ShardEngine {
	cfg := newConfig(opts)
	prefix = strings.TrimSuffix(prefix, "/")
	return &ShardEngine{
		client:  c,
		prefix:  prefix,
		members: prefix + "/members/",
		claims:  prefix + "/claims/",
		cfg:     cfg,
		log:     cfg.log.With("shards", prefix, "member", cfg.id),
	}
}

// ID returns the identity this engine joins with.
func (e *ShardEngine) ID() string { return e.cfg.id }

// Join starts a session, creates the member key <prefix>/members/<id>
// under its lease, and lists the members and claims. It fails with
// ErrIdentityInUse when another live session holds the member key.
func (e *ShardEngine) Join(ctx context.Context) (runner.Member, error) {
	s, err := grant(ctx, e.client, e.cfg.ttl, e.log)
	if err != nil {
		return nil, fmt.Errorf("join %s as %s: %w", e.prefix, e.cfg.id, err)
	}
	m, err := e.join(ctx, s)
	if err != nil {
		s.closeSoon()
		return nil, err
	}
	return m, nil
}

func (e *ShardEngine) join(ctx context.Context, s *session) (*member, error) {
	ctx, cancel := s.bind(ctx)
	defer cancel()
	key := e.members + e.cfg.id
	resp, err := e.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, "", clientv3.WithLease(s.id))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return nil, fmt.Errorf("join %s as %s: %w", e.prefix, e.cfg.id, err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) != 1 || kvs[0].Lease != int64(s.id) {
			return nil, fmt.Errorf("join %s as %s: %w", e.prefix, e.cfg.id, ErrIdentityInUse)
		}
	}
	m := &member{
		e:       e,
		s:       s,
		terms:   map[string]*claimTerm{},
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
		release: map[string]int64{},
	}
	list, err := e.client.Get(ctx, e.prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("join %s as %s: list: %w", e.prefix, e.cfg.id, err)
	}
	m.replace(list.Kvs, list.Header.Revision)
	wctx, stop := s.bind(context.Background())
	m.stop = stop
	go m.run(wctx, list.Header.Revision+1)
	return m, nil
}

// member is a membership: a session, the member key under its lease, and
// a watch of the prefix that keeps the views and ends the claims.
type member struct {
	e       *ShardEngine
	s       *session
	members watchable.Map[string, struct{}]
	claims  watchable.Map[string, runner.Holder]

	mu      sync.Mutex
	rev     int64                 // the revision the views reflect
	current map[string]int64      // item -> token, as the views show
	terms   map[string]*claimTerm // item -> our live claim
	release map[string]int64      // item -> token of a claim whose release failed: retried
	ended   bool

	done    chan struct{}
	endOnce sync.Once
	stop    context.CancelFunc
	exited  chan struct{} // the watch goroutine returned
}

var _ runner.Member = (*member)(nil)

func (m *member) ID() string                                    { return m.e.cfg.id }
func (m *member) Members() watchable.View[string, struct{}]     { return m.members.View() }
func (m *member) Claims() watchable.View[string, runner.Holder] { return m.claims.View() }
func (m *member) Done() <-chan struct{}                         { return m.done }

// Claim creates <prefix>/claims/<item> under the member's lease if it is
// absent, in one transaction.
func (m *member) Claim(ctx context.Context, item string) (runner.Term, error) {
	if isClosed(m.done) {
		return nil, fmt.Errorf("claim %s: %w", item, m.endErr())
	}
	key := m.e.claims + item
	ctx, cancel := m.s.bind(ctx)
	defer cancel()
	resp, err := m.e.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, m.ID(), clientv3.WithLease(m.s.id))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		if isClosed(m.done) || m.s.Err() != nil {
			err = m.endErr()
		}
		return nil, fmt.Errorf("claim %s: %w", item, err)
	}
	token := resp.Header.Revision
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) != 1 || kvs[0].Lease != int64(m.s.id) {
			holder := "?"
			if len(kvs) == 1 {
				holder = string(kvs[0].Value)
			}
			return nil, fmt.Errorf("claim %s: held by %s: %w", item, holder, runner.ErrClaimed)
		}
		token = kvs[0].CreateRevision // ours: an earlier answer was lost
	}
	return m.register(item, token), nil
}

// register returns the term of our claim on item created at token, ended
// already if the watch has seen it go.
func (m *member) register(item string, token int64) *claimTerm {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.terms[item]; t != nil && t.token == token {
		return t
	}
	t := &claimTerm{m: m, item: item, token: token, done: make(chan struct{})}
	switch {
	case m.ended:
		t.endLocked()
	case m.rev >= token && m.current[item] != token:
		t.endLocked() // deleted already: the watch is past it
	default:
		if old := m.terms[item]; old != nil {
			old.endLocked()
		}
		m.terms[item] = t
	}
	return t
}

// Leave ends the member and revokes its lease: the member key and every
// claim are deleted in one revision.
func (m *member) Leave(ctx context.Context) error {
	m.end(nil)
	err := m.s.close(ctx)
	<-m.exited
	return err
}

func (m *member) endErr() error {
	if err := m.s.Err(); err != nil {
		return err
	}
	return fmt.Errorf("member %s: %w", m.ID(), errClosed)
}

// end ends the member and every claim, and closes the views.
func (m *member) end(why error) {
	m.endOnce.Do(func() {
		m.mu.Lock()
		m.ended = true
		for item, t := range m.terms {
			t.endLocked()
			delete(m.terms, item)
		}
		m.mu.Unlock()
		close(m.done)
		m.stop()
		m.members.Close()
		m.claims.Close()
		if why != nil {
			m.e.log.Warn("membership lost", "error", why)
		}
	})
}

// run follows the prefix from revision rev until the member ends, and
// closes the session when it ends other than by Leave.
func (m *member) run(ctx context.Context, rev int64) {
	defer close(m.exited)
	defer func() {
		if err := m.s.closeSoon(); err != nil {
			m.e.log.Warn("revoke after the membership ended", "error", err)
		}
	}()
	sessionDone := make(chan struct{})
	defer close(sessionDone)
	go func() {
		select {
		case <-m.s.Done():
			m.end(m.s.Err())
		case <-sessionDone:
		}
	}()
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := m.e.client.Watch(wctx, m.e.prefix+"/", clientv3.WithPrefix(), clientv3.WithRev(rev))
		m.follow(ctx, wch)
		cancel()
		if ctx.Err() != nil {
			return
		}
		for {
			next, err := m.relist(ctx)
			if err == nil {
				rev = next
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryPause):
			}
		}
	}
}

// follow applies the watch responses until the watch breaks or ctx ends,
// and retries the failed releases meanwhile.
func (m *member) follow(ctx context.Context, wch clientv3.WatchChan) {
	for {
		var retry <-chan time.Time
		if m.pendingReleases() {
			retry = time.After(releaseRetry)
		}
		select {
		case resp, ok := <-wch:
			if !ok || resp.Err() != nil {
				return // compacted, no etcd leader, or ctx ended: list again
			}
			m.apply(resp.Events)
		case <-retry:
			m.retryReleases(ctx)
		}
	}
}

// releaseRetry spaces the retries of releases that failed.
const releaseRetry = time.Second

func (m *member) pendingReleases() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.release) > 0
}

// relist lists the prefix and replaces the views, after a broken watch.
func (m *member) relist(ctx context.Context) (int64, error) {
	gctx, cancel := context.WithTimeout(ctx, m.s.ttl)
	defer cancel()
	list, err := m.e.client.Get(gctx, m.e.prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	m.e.log.Debug("listed the shards again after the watch broke", "revision", list.Header.Revision)
	if !m.replace(list.Kvs, list.Header.Revision) {
		m.end(fmt.Errorf("member %s: %w", m.ID(), errMemberKeyDeleted))
	}
	return list.Header.Revision + 1, nil
}

// split tells a key of the prefix apart: a member, a claim, or neither.
func (m *member) split(key string) (kind byte, name string) {
	switch {
	case strings.HasPrefix(key, m.e.members):
		return 'm', key[len(m.e.members):]
	case strings.HasPrefix(key, m.e.claims):
		return 'c', key[len(m.e.claims):]
	}
	return 0, ""
}

// replace makes the views the listed keys at revision rev, and ends the
// claims of ours that are not among them. It reports whether our member key
// is among them.
func (m *member) replace(kvs []*mvccpb.KeyValue, rev int64) (self bool) {
	members := map[string]struct{}{}
	claims := map[string]runner.Holder{}
	for _, kv := range kvs {
		switch kind, name := m.split(string(kv.Key)); kind {
		case 'm':
			members[name] = struct{}{}
		case 'c':
			claims[name] = runner.Holder{Member: string(kv.Value), Token: kv.CreateRevision}
		}
	}
	_, self = members[m.ID()]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return self
	}
	m.rev = rev
	m.current = make(map[string]int64, len(claims))
	for item, h := range claims {
		m.current[item] = h.Token
	}
	for item, t := range m.terms {
		if m.current[item] != t.token && t.token <= rev {
			t.endLocked()
			delete(m.terms, item)
		}
	}
	// Members before claims: a member gone is gone from Members no later
	// than its claims from Claims.
	m.members.Replace(members)
	m.claims.Replace(claims)
	return self
}

// errMemberKeyDeleted ends a member whose member key was deleted while its
// lease lives (by an operator): the others no longer count it.
var errMemberKeyDeleted = errors.New("member key deleted")

// apply applies one watch response, and ends the member if its own member
// key was deleted.
func (m *member) apply(events []*clientv3.Event) {
	if m.applyLocked(events) {
		m.end(fmt.Errorf("member %s: %w", m.ID(), errMemberKeyDeleted))
	}
}

func (m *member) applyLocked(events []*clientv3.Event) (selfDeleted bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || len(events) == 0 {
		return false
	}
	m.members.Batch(func(b *watchable.Batch[string, struct{}]) {
		for _, ev := range events {
			if kind, name := m.split(string(ev.Kv.Key)); kind == 'm' {
				if ev.Type == mvccpb.DELETE {
					b.Delete(name)
					selfDeleted = selfDeleted || name == m.ID()
				} else {
					b.Store(name, struct{}{})
				}
			}
		}
	})
	m.claims.Batch(func(b *watchable.Batch[string, runner.Holder]) {
		for _, ev := range events {
			kind, item := m.split(string(ev.Kv.Key))
			if kind != 'c' {
				continue
			}
			t := m.terms[item]
			if ev.Type == mvccpb.DELETE {
				b.Delete(item)
				delete(m.current, item)
				if t != nil && t.token < ev.Kv.ModRevision {
					t.endLocked()
					delete(m.terms, item)
				}
				continue
			}
			b.Store(item, runner.Holder{Member: string(ev.Kv.Value), Token: ev.Kv.CreateRevision})
			m.current[item] = ev.Kv.CreateRevision
			if t != nil && t.token != ev.Kv.CreateRevision && t.token < ev.Kv.ModRevision {
				t.endLocked()
				delete(m.terms, item)
			}
		}
	})
	m.rev = max(m.rev, events[len(events)-1].Kv.ModRevision)
	return selfDeleted
}

// retryReleases deletes again the claims whose release failed, since they
// would otherwise live as long as the member.
func (m *member) retryReleases(ctx context.Context) {
	m.mu.Lock()
	pending := make(map[string]int64, len(m.release))
	for item, token := range m.release {
		if m.current[item] == token {
			pending[item] = token
		} else {
			delete(m.release, item) // gone already
		}
	}
	m.mu.Unlock()
	for item, token := range pending {
		rctx, cancel := context.WithTimeout(ctx, m.s.ttl)
		if err := m.deleteClaim(rctx, item, token); err == nil {
			m.mu.Lock()
			delete(m.release, item)
			m.mu.Unlock()
		}
		cancel()
	}
}

// deleteClaim deletes the claim on item if it is still the one created at
// token.
func (m *member) deleteClaim(ctx context.Context, item string, token int64) error {
	key := m.e.claims + item
	_, err := m.e.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", token)).
		Then(clientv3.OpDelete(key)).
		Commit()
	return err
}

// claimTerm is a claim of ours on one item.
type claimTerm struct {
	m     *member
	item  string
	token int64
	done  chan struct{}
}

var _ runner.Term = (*claimTerm)(nil)

func (t *claimTerm) Token() int64          { return t.token }
func (t *claimTerm) Done() <-chan struct{} { return t.done }

// Resign deletes the claim if it is still the one created at the term's
// token. If etcd cannot be reached, the member deletes it later, at its
// next watch event, or it vanishes with the member.
func (t *claimTerm) Resign(ctx context.Context) error {
	m := t.m
	m.mu.Lock()
	if isClosed(t.done) {
		m.mu.Unlock()
		return nil
	}
	t.endLocked()
	if m.terms[t.item] == t {
		delete(m.terms, t.item)
	}
	m.mu.Unlock()
	err := m.deleteClaim(ctx, t.item, t.token)
	if err != nil {
		m.mu.Lock()
		m.release[t.item] = t.token
		m.mu.Unlock()
		return fmt.Errorf("release %s: %w", t.item, err)
	}
	return nil
}

// endLocked closes Done; m.mu is held.
func (t *claimTerm) endLocked() {
	if !isClosed(t.done) {
		close(t.done)
	}
}
