package status_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/runner"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog, which client-go logs through, starts its flush daemon at init.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}

// elector is an election the test decides: Campaign reports each call on
// campaigns and returns the term the test grants.
type elector struct {
	campaigns chan struct{}
	grants    chan *term
}

func newElector() *elector {
	return &elector{campaigns: make(chan struct{}, 16), grants: make(chan *term)}
}

func (e *elector) Campaign(ctx context.Context) (runner.Term, error) {
	e.campaigns <- struct{}{}
	select {
	case t := <-e.grants:
		return t, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// grant waits until the writer campaigns, and makes it lead with a new term.
func (e *elector) grant(t *testing.T, token int64) *term {
	t.Helper()
	tm := &term{token: token, done: make(chan struct{})}
	select {
	case e.grants <- tm:
	case <-time.After(testrun.Timeout):
		t.Fatalf("the writer did not campaign for term %d", token)
	}
	return tm
}

// campaigning waits until the writer campaigns once more.
func (e *elector) campaigning(t *testing.T) {
	t.Helper()
	select {
	case <-e.campaigns:
	case <-time.After(testrun.Timeout):
		t.Fatal("the writer did not campaign")
	}
}

type term struct {
	token    int64
	done     chan struct{}
	once     sync.Once
	resigned atomic.Bool
}

func (t *term) Token() int64          { return t.token }
func (t *term) Done() <-chan struct{} { return t.done }
func (t *term) end()                  { t.once.Do(func() { close(t.done) }) }
func (t *term) Resign(context.Context) error {
	t.resigned.Store(true)
	t.end()
	return nil
}
