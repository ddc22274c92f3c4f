package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/runner"
	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Elector is a candidacy in the election held on one Lease: a
// runner.Elector. Create one with NewElector; it is safe for concurrent
// use, and used by one runner.LeaderOnly at a time.
type Elector struct {
	leases    coordclient.LeaseInterface
	name      string
	namespace string
	cfg       config
}

var _ runner.Elector = (*Elector)(nil)

// NewElector returns a candidate, with the identity of WithIdentity, in
// the election held on the Lease name in namespace; client is
// clientset.CoordinationV1(). The Lease is created by the first candidate
// to campaign. It fails if name is not a valid Lease name or the Timing is
// not consistent.
func NewElector(client coordclient.LeasesGetter, namespace, name string, opts ...Option) (*Elector, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("lease.NewElector: Lease name %q: %v", name, errs)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("lease.NewElector %s: %w", name, err)
	}
	cfg.logger = cfg.logger.With("election", namespace+"/"+name, "identity", cfg.identity)
	return &Elector{leases: client.Leases(namespace), name: name, namespace: namespace, cfg: cfg}, nil
}

// Identity returns the candidate's identity, the Lease's holderIdentity
// while it leads.
func (e *Elector) Identity() string { return e.cfg.identity }

// Campaign watches the Lease until it is vacant (absent, released, or not
// renewed for its duration, as this process counts it) or held by this
// identity, then takes it with an update conditioned on the version seen;
// when another candidate takes it first, it goes on watching. It returns
// the Term once the Lease is taken, which renews it until it ends.
//
// While it watches, problems reaching the API server are reported through
// runner.HealthOf(ctx) under the keys "list" and "watch"; an error other
// than a lost race to take the Lease is returned.
func (e *Elector) Campaign(ctx context.Context) (runner.Term, error) {
	ctx, cancel := context.WithCancel(ctx)
	inf := informer.New[*coordv1.Lease](e.leases,
		informer.WithFieldSelector("metadata.name="+e.name),
		informer.WithName("election "+e.name),
		informer.WithLogger(e.cfg.logger),
		informer.WithBackoff(e.cfg.timing.RetryPeriod/4, e.cfg.timing.RetryPeriod))
	ran := make(chan error, 1)
	go func() { ran <- inf.Run(ctx) }()
	defer func() {
		cancel()
		<-ran
	}()

	key := types.NamespacedName{Namespace: e.namespace, Name: e.name}
	sub := inf.Output().Subscribe(ctx)
	var obs observations
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var lease *coordv1.Lease
	initialized := false
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case s, ok := <-sub:
			if !ok {
				return nil, ctx.Err()
			}
			lease, _ = s.State.Get(key)
			initialized = s.Initialized
		case <-timer.C:
		}
		if !initialized {
			continue
		}
		now := time.Now()
		if lease != nil && holderOf(lease) != e.cfg.identity {
			if at := obs.expiresAt(lease, now); at.After(now) {
				timer.Reset(at.Sub(now)) // held: look again when it expires
				continue
			}
		}
		out, sent, err := acquire(ctx, e.leases, e.name, lease, e.cfg.identity, e.cfg.timing, nil, nil)
		switch {
		case err == nil:
			e.cfg.logger.Info("elected", "token", tokenOf(out))
			return startTerm(e.leases, out, sent, e.cfg.timing, e.cfg.logger), nil
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
			// Another candidate was first: the watch shows who.
			continue
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			return nil, fmt.Errorf("take lease %s/%s: %w", e.namespace, e.name, err)
		}
	}
}
