package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/switchyard-go/switchyard/runner"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// listWatch is the reflector's lister and watcher: the client with the
// selectors applied, reporting every failure and every recovery.
type listWatch struct {
	client       Client[runtime.Object]
	resource     string
	label, field string
	health       runner.Health
	log          *slog.Logger

	mu   sync.Mutex
	last map[string]string // the problem reported under each key, "" for none
}

func (lw *listWatch) listerWatcher() cache.ListerWatcher {
	return &cache.ListWatch{ListWithContextFunc: lw.list, WatchFuncWithContext: lw.watch}
}

func (lw *listWatch) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.LabelSelector, opts.FieldSelector = lw.label, lw.field
	obj, err := lw.client.List(ctx, opts)
	switch {
	case err == nil:
		lw.report("list", nil)
	case ctx.Err() != nil:
		// Stopping: not a problem.
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		// The reflector asked for a compacted resource version, and lists
		// again at once from the newest: part of the normal course.
		lw.log.Debug("list again: the resource version is compacted", "resourceVersion", opts.ResourceVersion)
	default:
		lw.report("list", lw.explain("list", err))
	}
	return obj, err
}

func (lw *listWatch) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.LabelSelector, opts.FieldSelector = lw.label, lw.field
	w, err := lw.client.Watch(ctx, opts)
	switch {
	case err == nil:
		lw.report("watch", nil)
	case ctx.Err() != nil:
	default:
		lw.report("watch", lw.explain("watch", err))
	}
	return w, err
}

// errNotServed marks a resource the API server does not serve.
var errNotServed = errors.New("the API server does not serve this resource: is its CustomResourceDefinition installed? (retrying)")

func (lw *listWatch) explain(op string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s: %w: %w", op, lw.resource, err, errNotServed)
	}
	return fmt.Errorf("%s %s: %w (retrying)", op, lw.resource, err)
}

// report records the problem under key (nil clears it) in the runner's
// Health, and logs when it changes.
func (lw *listWatch) report(key string, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	lw.mu.Lock()
	if lw.last == nil {
		lw.last = map[string]string{}
	}
	prev := lw.last[key]
	lw.last[key] = msg
	lw.mu.Unlock()
	if prev == msg {
		return
	}
	lw.health.Report(key, err)
	switch {
	case err != nil:
		lw.log.Warn("informer problem", "key", key, "error", err)
	case prev != "":
		lw.log.Info("informer problem resolved", "key", key, "was", prev)
	}
}
