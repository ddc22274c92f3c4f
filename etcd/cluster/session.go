package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrSessionLost is wrapped by the errors of the operations of a candidate
// or member whose session was lost.
var ErrSessionLost = errors.New("session lost")

// session is a lease the process keeps alive, and the deadline after which
// it no longer trusts it. It renews every third of the TTL with one
// KeepAlive round trip at a time, so that it knows when each renewal was
// sent: etcd renewed the lease no earlier than that, so the lease lives at
// least until then plus the TTL. The session is lost once 90% of the TTL
// has passed since the last renewal sent and confirmed (or since the grant),
// which is before etcd can expire it, so the holder stops first.
//
// Its methods are safe for concurrent use.
type session struct {
	client *clientv3.Client
	id     clientv3.LeaseID
	ttl    time.Duration // as granted
	log    *slog.Logger

	done   chan struct{}      // closed when the session has ended: lost or closed
	ctx    context.Context    // cancelled when the session has ended
	cancel context.CancelFunc // cancels ctx
	stop   context.CancelFunc
	exited chan struct{} // closed when the keepalive goroutine has returned

	mu  sync.Mutex
	err error // why the session ended

	closeOnce sync.Once
	closeErr  error // Revoke's result
}

// trusted is the share of the TTL after the last confirmed renewal during
// which a session counts as alive.
const trusted = 0.9

// grant starts a session with a new lease of the given TTL.
func grant(ctx context.Context, c *clientv3.Client, ttl time.Duration, log *slog.Logger) (*session, error) {
	sent := time.Now()
	resp, err := c.Grant(ctx, ttlSeconds(ttl))
	if err != nil {
		return nil, fmt.Errorf("grant a lease: %w", err)
	}
	kctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	sctx, cancel := context.WithCancel(context.Background())
	s := &session{
		ctx:    sctx,
		cancel: cancel,
		client: c,
		id:     resp.ID,
		ttl:    time.Duration(resp.TTL) * time.Second,
		log:    log,
		done:   make(chan struct{}),
		stop:   stop,
		exited: make(chan struct{}),
	}
	go s.keepAlive(kctx, sent)
	return s, nil
}

// Done is closed when the session has ended.
func (s *session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended, or nil while it lasts.
func (s *session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// trust returns how long a renewal sent at some time keeps the session
// alive for the process: 90% of ttl.
func trust(ttl time.Duration) time.Duration { return time.Duration(float64(ttl) * trusted) }

// keepAlive renews the lease until ctx is cancelled (close) or a renewal is
// not confirmed before the deadline.
func (s *session) keepAlive(ctx context.Context, granted time.Time) {
	defer close(s.exited)
	ttl := s.ttl
	deadline := granted.Add(trust(ttl))
	next := granted.Add(ttl / 3)
	retry := min(max(ttl/10, 50*time.Millisecond), 500*time.Millisecond)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			s.end(nil)
			return
		case <-timer.C:
		}
		if !time.Now().Before(deadline) {
			s.end(fmt.Errorf("lease %x not renewed within %v: %w", int64(s.id), trust(ttl), ErrSessionLost))
			return
		}
		sent := time.Now()
		rctx, cancel := context.WithDeadline(ctx, deadline)
		resp, err := s.client.KeepAliveOnce(rctx, s.id)
		cancel()
		switch {
		case err == nil:
			if granted := time.Duration(resp.TTL) * time.Second; granted > 0 {
				ttl = granted
			}
			deadline = sent.Add(trust(ttl))
			next = sent.Add(ttl / 3)
		case ctx.Err() != nil:
			s.end(nil)
			return
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			s.end(fmt.Errorf("lease %x expired: %w", int64(s.id), ErrSessionLost))
			return
		default:
			// Unreachable, or the deadline passed in the call: try again
			// soon; the check above ends the session at the deadline.
			next = time.Now().Add(retry)
			if next.After(deadline) {
				next = deadline
			}
		}
		timer.Reset(time.Until(next))
	}
}

// end records why the session ended (nil when closed) and closes Done.
func (s *session) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if isClosed(s.done) {
		return
	}
	if err == nil {
		err = fmt.Errorf("lease %x: %w", int64(s.id), errClosed)
	} else {
		s.log.Warn("etcd session lost", "lease", fmt.Sprintf("%x", int64(s.id)), "error", err)
	}
	s.err = err
	close(s.done)
	s.cancel()
}

// bind returns a context that ends with ctx or with the session, for a
// call that is pointless once the session has ended: a watch or a write
// under its lease, which a partition would otherwise hold up.
func (s *session) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

var errClosed = errors.New("session closed")

// close stops renewing and revokes the lease, so that every key under it
// is deleted at once. It waits for the keepalive goroutine. Revoking a lease
// that is lost or already revoked is not an error.
func (s *session) close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.exited
		_, err := s.client.Revoke(ctx, s.id)
		if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			s.closeErr = fmt.Errorf("revoke lease %x: %w", int64(s.id), err)
		}
	})
	return s.closeErr
}

// closeSoon closes the session within the TTL, for a caller that has no
// context of its own.
func (s *session) closeSoon() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.ttl)
	defer cancel()
	return s.close(ctx)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
