package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// ShardEngine is a sharding group on Kubernetes Leases: a runner.ShardEngine.
// Create one with NewShardEngine; it is safe for concurrent use.
//
// Each member holds a Lease named <group>-m-<member ID>, and each claimed
// item a Lease named <group>-i-<item>-<hash> annotated with the item's
// name; all carry the label LabelGroup=<group>. A member's Members and
// Claims come from one watch of the group's Leases: a member is live while
// its Lease is not expired; an item is claimed while its Lease has a
// holder, is not expired, and its holder's membership was not seen to end
// (a member that leaves deletes its Lease, which frees its items at once).
// Members whose Leases expired long ago are deleted by the others.
type ShardEngine struct {
	leases    coordclient.LeaseInterface
	namespace string
	group     string
	cfg       config
}

var _ runner.ShardEngine = (*ShardEngine)(nil)

// NewShardEngine returns the engine of the sharding group named group (a
// DNS label of at most 40 characters) in namespace; client is
// clientset.CoordinationV1(). Its members are named after WithIdentity. It
// fails if group is not a valid name or the Timing is not consistent.
func NewShardEngine(client coordclient.LeasesGetter, namespace, group string, opts ...Option) (*ShardEngine, error) {
	if err := checkGroup(group); err != nil {
		return nil, fmt.Errorf("lease.NewShardEngine: %w", err)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("lease.NewShardEngine %s: %w", group, err)
	}
	cfg.logger = cfg.logger.With("group", namespace+"/"+group)
	return &ShardEngine{leases: client.Leases(namespace), namespace: namespace, group: group, cfg: cfg}, nil
}

// Join creates a member Lease for a new member, named after the identity
// with a random suffix, and returns the member, which renews it. Members
// and Claims are initialized once the member's watch has listed the
// group's Leases.
func (s *ShardEngine) Join(ctx context.Context) (runner.Member, error) {
	id := memberID(s.cfg.identity)
	labels := map[string]string{LabelGroup: s.group, LabelRole: roleMember}
	lease, sent, err := acquire(ctx, s.leases, memberLease(s.group, id), nil, id, s.cfg.timing, labels, nil)
	if err != nil {
		return nil, fmt.Errorf("join %s/%s as %s: %w", s.namespace, s.group, id, err)
	}
	log := s.cfg.logger.With("member", id)
	ictx, cancel := context.WithCancel(context.Background())
	m := &member{
		e: s, id: id, log: log, cancel: cancel,
		term: startTerm(s.leases, lease, sent, s.cfg.timing, log),
		done: make(chan struct{}),
		held: map[string]*term{}, live: map[string]bool{}, dead: map[string]time.Time{},
	}
	m.membersReady = m.members.RegisterInitializer("members of " + s.group)
	m.claimsReady = m.claims.RegisterInitializer("claims of " + s.group)
	m.inf = informer.New[*coordv1.Lease](s.leases,
		informer.WithLabelSelector(LabelGroup+"="+s.group),
		informer.WithName("shard group "+s.group),
		informer.WithLogger(log),
		informer.WithBackoff(s.cfg.timing.RetryPeriod/4, s.cfg.timing.RetryPeriod))
	// The watch runs with the runner's Health, so that its problems show.
	wctx := context.WithoutCancel(ctx)
	m.wg.Add(3)
	go func() {
		defer m.wg.Done()
		if err := m.inf.Run(contextWithCancelOf(wctx, ictx)); err != nil {
			log.Error("watch the group's Leases", "error", err)
		}
	}()
	go func() {
		defer m.wg.Done()
		m.view(ictx)
	}()
	go func() {
		defer m.wg.Done()
		select {
		case <-m.term.Done():
			m.finish("membership lost")
		case <-ictx.Done():
		}
	}()
	log.Info("joined")
	return m, nil
}

// contextWithCancelOf returns ctx's values with cancel's cancellation.
func contextWithCancelOf(ctx, cancel context.Context) context.Context {
	out, stop := context.WithCancel(ctx)
	context.AfterFunc(cancel, stop)
	return out
}

// member is one membership: a runner.Member.
type member struct {
	e      *ShardEngine
	id     string
	log    *slog.Logger
	term   *term // the member Lease
	inf    *informer.Informer[*coordv1.Lease]
	cancel context.CancelFunc // stops the watch and the view
	wg     sync.WaitGroup

	members      watchable.Map[string, struct{}]
	claims       watchable.Map[string, runner.Holder]
	membersReady func()
	claimsReady  func()

	done       chan struct{}
	finishOnce sync.Once

	obs        observations
	collecting atomic.Bool // a collect is under way
	mu         sync.Mutex
	// Guarded by mu:
	held map[string]*term     // item name -> our last claim, which may have ended
	live map[string]bool      // members live at the last look
	dead map[string]time.Time // members seen to end, and when
}

func (m *member) ID() string                                    { return m.id }
func (m *member) Members() watchable.View[string, struct{}]     { return m.members.View() }
func (m *member) Claims() watchable.View[string, runner.Holder] { return m.claims.View() }
func (m *member) Done() <-chan struct{}                         { return m.done }

// finish ends the membership here: every claim, the watch, and Done.
func (m *member) finish(why string) {
	m.finishOnce.Do(func() {
		m.term.stop(why)
		m.mu.Lock()
		held := m.held
		m.held = map[string]*term{}
		m.mu.Unlock()
		for _, t := range held {
			t.stop("membership ended")
		}
		m.cancel()
		close(m.done)
		m.log.Info("membership ended", "why", why)
	})
}

// Leave ends the membership and deletes its Lease, which frees the items
// it held for the others at once, and waits for the member's goroutines.
func (m *member) Leave(ctx context.Context) error {
	m.finish("left")
	name := memberLease(m.e.group, m.id)
	err := m.e.leases.Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	m.wg.Wait()
	if err != nil {
		return fmt.Errorf("delete member lease %s: %w", name, err)
	}
	return nil
}

var errMemberEnded = errors.New("membership ended")

// Claim takes item's Lease for this member when it is vacant: absent,
// released, expired, or held by a member seen to end; or returns this
// member's claim when it holds it already. The attempt is conditioned on
// the version the watch shows. If that version conflicts, or shows the
// Lease held by another member, the Lease is read from the API server and
// the attempt made once more: a watch that is behind (a release not seen
// yet) never refuses a claim by itself.
func (m *member) Claim(ctx context.Context, item string) (runner.Term, error) {
	select {
	case <-m.done:
		return nil, fmt.Errorf("claim %s: %w", item, errMemberEnded)
	default:
	}
	m.mu.Lock()
	var ended int64 // the token of our last claim of item, if it ended
	if t := m.held[item]; t != nil {
		if !t.ended() {
			m.mu.Unlock()
			return t, nil
		}
		ended = t.token
	}
	m.mu.Unlock()

	name := itemLease(m.e.group, item)
	base, _ := m.inf.Output().State().Get(types.NamespacedName{Namespace: m.e.namespace, Name: name})
	for attempt := 0; ; attempt++ {
		t, err := m.try(ctx, item, name, base, ended)
		if err == nil || attempt > 0 || !(apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || errors.Is(err, runner.ErrClaimed)) {
			return t, err
		}
		// The watch may be behind: read the Lease and decide again.
		base, err = m.e.leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			base, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("claim %s: read lease %s: %w", item, name, err)
		}
	}
}

// try makes one attempt on base, the version of the Lease read (nil if
// absent). ended is the token of a claim of ours on item that has ended.
func (m *member) try(ctx context.Context, item, name string, base *coordv1.Lease, ended int64) (runner.Term, error) {
	now := time.Now()
	var out *coordv1.Lease
	var sent time.Time
	var err error
	switch holder := holderOf(base); {
	case base != nil && holder == m.id && tokenOf(base) != ended:
		// Ours already, as after a claim whose answer was lost: keep the
		// term (same token), renewing it now to know how long it lasts.
		// (A claim of ours that ended is taken again, with a new token.)
		out, sent = base.DeepCopy(), now
		out.Spec.RenewTime = &metav1.MicroTime{Time: now}
		out, err = m.e.leases.Update(ctx, out, metav1.UpdateOptions{})
	case base != nil && holder != "" && m.obs.expiresAt(base, now).After(now) && !m.isDead(holder):
		return nil, fmt.Errorf("claim %s: held by %s (token %d): %w", item, holder, tokenOf(base), runner.ErrClaimed)
	default:
		labels := map[string]string{LabelGroup: m.e.group, LabelRole: roleItem}
		annotations := map[string]string{AnnotationItem: item}
		out, sent, err = acquire(ctx, m.e.leases, name, base, m.id, m.e.cfg.timing, labels, annotations)
	}
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		return nil, fmt.Errorf("claim %s: %w", item, err)
	}
	t := startTerm(m.e.leases, out, sent, m.e.cfg.timing, m.log.With("item", item))
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.done:
		// The membership ended meanwhile: so does the claim.
		t.stop("membership ended")
		return nil, fmt.Errorf("claim %s: %w", item, errMemberEnded)
	default:
	}
	m.held[item] = t
	return t, nil
}

func (m *member) isDead(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.dead[id]
	return ok
}

// view keeps Members and Claims up to date with the group's Leases and the
// passing of time, until ctx is done.
func (m *member) view(ctx context.Context) {
	sub := m.inf.Output().Subscribe(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var state watchable.State[types.NamespacedName, *coordv1.Lease]
	initialized := false
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-sub:
			if !ok {
				return
			}
			state, initialized = s.State, s.Initialized
		case <-timer.C:
		}
		next, self := m.look(state, time.Now())
		if initialized && self {
			m.membersReady()
			m.claimsReady()
		}
		if !next.IsZero() {
			timer.Reset(time.Until(next))
		}
	}
}

// look computes Members and Claims from the Leases at now, publishes them
// (members first), and returns when the next Lease expires and whether
// this member is among the members.
func (m *member) look(state watchable.State[types.NamespacedName, *coordv1.Lease], now time.Time) (next time.Time, self bool) {
	members := map[string]struct{}{}
	claims := map[string]runner.Holder{}
	names := map[string]bool{}
	var stale []*coordv1.Lease
	soonest := func(at time.Time) {
		if at.After(now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	for _, l := range state.All() {
		names[l.Name] = true
		if l.Labels[LabelRole] != roleMember {
			continue
		}
		at := m.obs.expiresAt(l, now)
		if at.After(now) {
			members[holderOf(l)] = struct{}{}
			soonest(at)
		} else if now.Sub(at) > 2*durationOf(l) {
			stale = append(stale, l)
		}
	}

	m.mu.Lock()
	for id := range m.live {
		if _, ok := members[id]; !ok {
			m.dead[id] = now
		}
	}
	m.live = map[string]bool{}
	for id := range members {
		m.live[id] = true
	}
	for _, l := range state.All() {
		if l.Labels[LabelRole] != roleItem {
			continue
		}
		holder := holderOf(l)
		if _, dead := m.dead[holder]; dead || holder == "" {
			continue
		}
		if at := m.obs.expiresAt(l, now); at.After(now) {
			claims[l.Annotations[AnnotationItem]] = runner.Holder{Member: holder, Token: tokenOf(l)}
			soonest(at)
		}
	}
	// A member seen to end is remembered while Leases may still name it.
	for id, at := range m.dead {
		if now.Sub(at) > 10*m.e.cfg.timing.LeaseDuration {
			delete(m.dead, id)
		}
	}
	m.mu.Unlock()
	m.obs.keep(names)

	m.members.Replace(members)
	m.claims.Replace(maps.Clone(claims))
	if len(stale) > 0 && m.collecting.CompareAndSwap(false, true) {
		m.collect(stale)
	}
	_, self = members[m.id]
	return next, self
}

// collect deletes the Leases of members that expired long ago, each only
// if it has not changed since.
func (m *member) collect(stale []*coordv1.Lease) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer m.collecting.Store(false)
		for _, l := range stale {
			ctx, cancel := context.WithTimeout(context.Background(), m.e.cfg.timing.RenewDeadline)
			rv := l.ResourceVersion
			err := m.e.leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
			cancel()
			if err == nil {
				m.log.Info("deleted the Lease of a member that ended long ago", "lease", l.Name)
			}
		}
	}()
}
