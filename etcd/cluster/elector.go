package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/runner"
)

// ErrNoLeader is returned by Elector.Leader when nobody leads.
var ErrNoLeader = errors.New("no leader")

// Elector is a candidate in the election held on one etcd key, for
// runner.LeaderOnly. It is safe for concurrent use.
type Elector struct {
	client *clientv3.Client
	key    string
	cfg    config
	log    *slog.Logger
}

var _ runner.Elector = (*Elector)(nil)

// NewElector returns a candidate in the election held on key: the leader
// is the candidate whose session created it. Options: WithTTL,
// WithIdentity, WithLogger.
func NewElector(c *clientv3.Client, key string, opts ...Option) *Elector {
	cfg := newConfig(opts)
	return &Elector{client: c, key: key, cfg: cfg, log: cfg.log.With("election", key, "candidate", cfg.id)}
}

// ID returns the candidate's identity, the leader key's value while it
// leads.
func (e *Elector) ID() string { return e.cfg.id }

// Campaign starts a session and blocks until the candidate leads: until it
// creates the leader key under its session's lease, trying again each time
// the key is deleted. The term's token is the key's create revision. It
// returns ctx.Err() when ctx ends first, or an error when etcd cannot be
// reached or the session is lost; the session is then revoked.
func (e *Elector) Campaign(ctx context.Context) (runner.Term, error) {
	s, err := grant(ctx, e.client, e.cfg.ttl, e.log)
	if err != nil {
		return nil, fmt.Errorf("campaign for %s: %w", e.key, err)
	}
	t, err := e.campaign(ctx, s)
	if err != nil {
		s.closeSoon()
		return nil, err
	}
	return t, nil
}

func (e *Elector) campaign(ctx context.Context, s *session) (runner.Term, error) {
	ctx, cancel := s.bind(ctx)
	defer cancel()
	for {
		resp, err := e.client.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(e.key), "=", 0)).
			Then(clientv3.OpPut(e.key, e.cfg.id, clientv3.WithLease(s.id))).
			Else(clientv3.OpGet(e.key)).
			Commit()
		if err != nil {
			if serr := s.Err(); serr != nil {
				err = serr
			}
			return nil, fmt.Errorf("campaign for %s: %w", e.key, err)
		}
		if resp.Succeeded {
			return newLeaderTerm(e, s, resp.Header.Revision), nil
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 1 && kvs[0].Lease == int64(s.id) {
			// Ours: an earlier attempt's answer was lost.
			return newLeaderTerm(e, s, kvs[0].CreateRevision), nil
		}
		if err := e.waitDelete(ctx, s, resp.Header.Revision+1); err != nil {
			return nil, err
		}
	}
}

// waitDelete returns once the leader key is deleted after revision rev,
// or ctx ends, or the session is lost.
func (e *Elector) waitDelete(ctx context.Context, s *session, rev int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := e.client.Watch(wctx, e.key, clientv3.WithRev(rev), clientv3.WithFilterPut())
	for {
		select {
		case resp, ok := <-wch:
			if !ok || resp.Err() != nil {
				// Closed or compacted: look again.
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return nil
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.DELETE {
					return nil
				}
			}
		case <-s.Done():
			return fmt.Errorf("campaign for %s: %w", e.key, s.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Leader returns the identity of the current leader and its term's token,
// or ErrNoLeader.
func (e *Elector) Leader(ctx context.Context) (id string, token int64, err error) {
	resp, err := e.client.Get(ctx, e.key)
	if err != nil {
		return "", 0, fmt.Errorf("read leader of %s: %w", e.key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", 0, ErrNoLeader
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].CreateRevision, nil
}

// leaderTerm is a leadership: it ends when its session ends, when the
// leader key is deleted or replaced, or on Resign.
type leaderTerm struct {
	e     *Elector
	s     *session
	token int64

	done    chan struct{}
	endOnce sync.Once
	stop    context.CancelFunc
	exited  chan struct{} // the watch goroutine returned
}

func newLeaderTerm(e *Elector, s *session, token int64) *leaderTerm {
	// The watch's context ends with the session too: a watch being set
	// up through a partition would otherwise not see the session end.
	ctx, stop := s.bind(context.Background())
	t := &leaderTerm{e: e, s: s, token: token, done: make(chan struct{}), stop: stop, exited: make(chan struct{})}
	go t.watch(ctx)
	return t
}

func (t *leaderTerm) Token() int64          { return t.token }
func (t *leaderTerm) Done() <-chan struct{} { return t.done }

// Resign revokes the session's lease, which deletes the leader key at once.
// On a term that has ended already it waits (within ctx) until the
// session is closed, and returns nil.
func (t *leaderTerm) Resign(ctx context.Context) error {
	if isClosed(t.done) {
		select {
		case <-t.exited:
		case <-ctx.Done():
		}
		return nil
	}
	t.end("resigned")
	err := t.s.close(ctx)
	<-t.exited
	return err
}

func (t *leaderTerm) end(why string) {
	t.endOnce.Do(func() {
		close(t.done)
		t.stop()
		if why != "resigned" {
			t.e.log.Warn("leadership ended", "token", t.token, "why", why)
		}
	})
}

// watch ends the term when the session ends or the key no longer is the
// one created at token; a term that ended other than by Resign has its
// session closed.
func (t *leaderTerm) watch(ctx context.Context) {
	defer close(t.exited)
	defer func() {
		if err := t.s.closeSoon(); err != nil {
			t.e.log.Warn("revoke after the leadership ended", "token", t.token, "error", err)
		}
	}()
	why := t.follow(ctx)
	t.end(why)
}

// follow watches the leader key until the term ends, and says why.
func (t *leaderTerm) follow(ctx context.Context) (why string) {
	ended := func() string {
		if err := t.s.Err(); err != nil && !errors.Is(err, errClosed) {
			return err.Error()
		}
		return "resigned"
	}
	rev := t.token + 1
	for {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := t.e.client.Watch(wctx, t.e.key, clientv3.WithRev(rev))
		gone, broken := t.read(ctx, wch)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ended()
		case gone:
			return "the leader key was deleted"
		case !broken:
			return ended()
		}
		// The watch broke (compaction, no etcd leader): look at the key.
		// The session's deadline bounds how long this may fail.
		for {
			next, err := t.check(ctx)
			if err == nil {
				rev = next
				break
			}
			select {
			case <-ctx.Done():
				return ended()
			case <-time.After(retryPause):
			}
		}
		if rev == 0 {
			return "the leader key was deleted"
		}
	}
}

// retryPause spaces the attempts of a watch that keeps breaking.
const retryPause = 100 * time.Millisecond

// check reads the leader key, and returns the revision to watch from, or 0
// if the key is no longer the one created at token.
func (t *leaderTerm) check(ctx context.Context) (int64, error) {
	gctx, cancel := context.WithTimeout(ctx, t.s.ttl)
	defer cancel()
	resp, err := t.e.client.Get(gctx, t.e.key)
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != t.token {
		return 0, nil
	}
	return resp.Header.Revision + 1, nil
}

// read reads watch responses until the leader key goes (gone), the watch
// breaks (broken), or ctx ends (neither).
func (t *leaderTerm) read(ctx context.Context, wch clientv3.WatchChan) (gone, broken bool) {
	for {
		select {
		case <-ctx.Done():
			return false, false
		case resp, ok := <-wch:
			if !ok || resp.Err() != nil {
				return false, ctx.Err() == nil
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.DELETE || ev.Kv.CreateRevision != t.token {
					return true, false
				}
			}
		}
	}
}
