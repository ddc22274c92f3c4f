package etcdtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// NewClient connects a client to endpoints and closes it when the test ends.
// A client made after the server it talks to is closed before it, since
// cleanups run last-registered first.
func NewClient(tb testing.TB, endpoints []string) *clientv3.Client {
	tb.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      quietLogger(),
	})
	if err != nil {
		tb.Fatalf("connect to etcd at %v: %v", endpoints, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Compact compacts the key-value store to its current revision and waits
// until the compaction has been applied to the backend (physical), so that
// a watch or a read at any older revision fails with ErrCompacted. It returns
// the revision compacted to.
func Compact(tb testing.TB, c *clientv3.Client) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// A Get of a key that never exists still reports the store's revision.
	resp, err := c.Get(ctx, "\x00etcdtest-revision")
	if err != nil {
		tb.Fatalf("read the current revision: %v", err)
	}
	rev := resp.Header.Revision
	if _, err := c.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		tb.Fatalf("compact to revision %d: %v", rev, err)
	}
	return rev
}
