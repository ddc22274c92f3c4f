package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// errLost reports a Lease that another process holds now, or that is gone.
var errLost = errors.New("lease lost")

// term is one Lease this process holds: an election's leadership, a
// membership, or the claim on an item. It renews the Lease every
// RetryPeriod until it ends, and implements runner.Term.
type term struct {
	leases coordclient.LeaseInterface
	name   string // the Lease's
	holder string
	token  int64
	timing Timing
	log    *slog.Logger

	done     chan struct{}
	doneOnce sync.Once
	stopLoop context.CancelFunc // stops the renewals
	loopDone chan struct{}

	mu    sync.Mutex
	lease *coordv1.Lease // the newest version this process wrote or read
}

// startTerm starts renewing lease, which this process has just written
// (acquired, or renewed), with a request sent at sent.
func startTerm(leases coordclient.LeaseInterface, lease *coordv1.Lease, sent time.Time, timing Timing, log *slog.Logger) *term {
	ctx, cancel := context.WithCancel(context.Background())
	t := &term{
		leases: leases, name: lease.Name, holder: holderOf(lease), token: tokenOf(lease),
		timing: timing, log: log.With("lease", lease.Name, "token", tokenOf(lease)),
		done: make(chan struct{}), stopLoop: cancel, loopDone: make(chan struct{}), lease: lease,
	}
	go t.renew(ctx, sent.Add(timing.RenewDeadline))
	return t
}

// Token returns the Lease's leaseTransitions when this process acquired it.
func (t *term) Token() int64 { return t.token }

// Done is closed when the term has ended.
func (t *term) Done() <-chan struct{} { return t.done }

// end ends the term, once, saying why.
func (t *term) end(why string) {
	t.doneOnce.Do(func() {
		close(t.done)
		t.log.Info("term ended", "why", why)
	})
}

func (t *term) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// renew renews the Lease until ctx is done, or until a renewal has not
// succeeded by validUntil, which moves on with every success: each one
// keeps the term for RenewDeadline from when it was sent, less than the
// LeaseDuration the others wait from when they see it.
func (t *term) renew(ctx context.Context, validUntil time.Time) {
	defer close(t.loopDone)
	deadline := time.NewTimer(time.Until(validUntil))
	defer deadline.Stop()
	tick := time.NewTimer(t.timing.RetryPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			t.end("not renewed within the renew deadline")
			return
		case <-tick.C:
		}
		sent := time.Now()
		rctx, cancel := context.WithDeadline(ctx, validUntil)
		err := t.update(rctx, func(l *coordv1.Lease) { l.Spec.RenewTime = &metav1.MicroTime{Time: sent} })
		cancel()
		switch {
		case err == nil:
			validUntil = sent.Add(t.timing.RenewDeadline)
			deadline.Reset(time.Until(validUntil))
		case errors.Is(err, errLost):
			t.end(err.Error())
			return
		case ctx.Err() != nil:
			return
		default:
			t.log.Warn("renewal failed; trying again", "error", err, "validFor", time.Until(validUntil).Round(time.Millisecond))
		}
		tick.Reset(t.timing.RetryPeriod)
	}
}

// update changes the Lease with change, on the newest version known,
// provided this process still holds it in this term: after a conflict it
// reads the Lease again and tries once more. It returns an error wrapping
// errLost when the Lease has another holder, another token, or is gone.
func (t *term) update(ctx context.Context, change func(*coordv1.Lease)) error {
	t.mu.Lock()
	base := t.lease
	t.mu.Unlock()
	for attempt := 0; ; attempt++ {
		l := base.DeepCopy()
		change(l)
		out, err := t.leases.Update(ctx, l, metav1.UpdateOptions{})
		switch {
		case err == nil:
			t.mu.Lock()
			t.lease = out
			t.mu.Unlock()
			return nil
		case apierrors.IsNotFound(err):
			return fmt.Errorf("lease %s deleted: %w", t.name, errLost)
		case !apierrors.IsConflict(err) || attempt > 0:
			return fmt.Errorf("update lease %s: %w", t.name, err)
		}
		// Changed by someone else: still ours?
		fresh, err := t.leases.Get(ctx, t.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("lease %s deleted: %w", t.name, errLost)
		case err != nil:
			return fmt.Errorf("read lease %s after a conflict: %w", t.name, err)
		case holderOf(fresh) != t.holder || tokenOf(fresh) != t.token:
			return fmt.Errorf("lease %s taken by %q (token %d): %w", t.name, holderOf(fresh), tokenOf(fresh), errLost)
		}
		base = fresh
	}
}

// Resign stops the renewals, ends the term and releases the Lease (its
// holder becomes empty), so that another process takes it at once.
// Resigning an ended term does nothing.
func (t *term) Resign(ctx context.Context) error {
	t.stopLoop()
	<-t.loopDone
	if t.ended() {
		return nil
	}
	t.end("resigned")
	err := t.update(ctx, func(l *coordv1.Lease) {
		now := metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity = nil
		l.Spec.RenewTime = &now
	})
	if errors.Is(err, errLost) {
		return nil // someone else's already
	}
	return err
}

// stop ends the term without releasing the Lease: its membership was
// ended, which ends its claims for everyone.
func (t *term) stop(why string) {
	t.stopLoop()
	<-t.loopDone
	t.end(why)
}

func holderOf(l *coordv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func tokenOf(l *coordv1.Lease) int64 {
	if l == nil || l.Spec.LeaseTransitions == nil {
		return 0
	}
	return int64(*l.Spec.LeaseTransitions)
}

func durationOf(l *coordv1.Lease) time.Duration {
	if l.Spec.LeaseDurationSeconds == nil {
		return 0
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}

// acquire takes the Lease name for holder: it creates it when base is nil,
// and otherwise updates base, the version read, which must be vacant or
// this holder's: the update fails with a conflict if the Lease changed
// since. The token grows by one. It returns the Lease written and when the
// request was sent.
func acquire(ctx context.Context, leases coordclient.LeaseInterface, name string, base *coordv1.Lease,
	holder string, timing Timing, labels, annotations map[string]string) (*coordv1.Lease, time.Time, error) {
	sent := time.Now()
	now := metav1.NewMicroTime(sent)
	seconds := int32(timing.LeaseDuration / time.Second)
	if base == nil {
		one := int32(1)
		l := &coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
			Spec: coordv1.LeaseSpec{
				HolderIdentity: &holder, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now, LeaseTransitions: &one,
			},
		}
		out, err := leases.Create(ctx, l, metav1.CreateOptions{})
		return out, sent, err
	}
	l := base.DeepCopy()
	next := int32(tokenOf(base) + 1)
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
	l.Spec.LeaseTransitions = &next
	out, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	return out, sent, err
}

// observations remembers when this process first saw each version of each
// Lease: expiry is counted from there on its own clock, as client-go's
// leaderelection does, so that clocks need not agree.
type observations struct {
	mu   sync.Mutex
	seen map[string]observation // by Lease name
}

type observation struct {
	version string
	at      time.Time
}

// at returns when the version of l was first seen, now if it is new.
func (o *observations) at(l *coordv1.Lease, now time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]observation{}
	}
	if s, ok := o.seen[l.Name]; ok && s.version == l.ResourceVersion {
		return s.at
	}
	o.seen[l.Name] = observation{version: l.ResourceVersion, at: now}
	return now
}

// keep forgets the Leases not in names.
func (o *observations) keep(names map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n := range o.seen {
		if !names[n] {
			delete(o.seen, n)
		}
	}
}

// expiresAt returns when l expires for this process: LeaseDuration after it
// first saw l's version; the zero time for a Lease nobody holds.
func (o *observations) expiresAt(l *coordv1.Lease, now time.Time) time.Time {
	if holderOf(l) == "" {
		return time.Time{}
	}
	return o.at(l, now).Add(durationOf(l))
}
