package status_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"github.com/switchyard-go/switchyard/kube/status"
	"github.com/switchyard-go/switchyard/watchable"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// racing lets another client change the object just before the writer's
// first status update reaches the API server, so that the update is made
// from a stale copy; it counts the updates the server accepts and the
// conflicts it answers.
type racing struct {
	status.Client[*unstructured.Unstructured]
	race      func(ctx context.Context)
	once      *sync.Once
	updates   *atomic.Int64
	conflicts *atomic.Int64
}

func (r racing) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	r.once.Do(func() { r.race(ctx) })
	out, err := r.Client.UpdateStatus(ctx, obj, opts)
	switch {
	case err == nil:
		r.updates.Add(1)
	case apierrors.IsConflict(err):
		r.conflicts.Add(1)
	}
	return out, err
}

// TestWriterRetriesConflict makes the writer's first status update stale:
// the real API server refuses it with 409 Conflict, and the writer reads
// the object again. When the other change was elsewhere in the object, the
// writer writes the status onto it, keeping that change; when the other
// change was the very status wanted, it writes nothing more.
//
// A conflict can happen twice: the informer may still deliver the other
// client's version after the writer's own update, and an update from it is
// refused in turn (then the fresh read finds the status in place). What
// must hold is that no update the server accepts was made from a stale copy
// or rewrote a status already there.
func TestWriterRetriesConflict(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	kubetest.InstallCRD(t, c.Config(), []byte(kubetest.WidgetCRD))
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	widgets := dyn.Resource(kubetest.WidgetResource).Namespace("default")
	objects := informer.NewUnstructured(dyn, kubetest.WidgetResource, "default", informer.WithLogger(testrun.Quiet))
	testrun.Run(t, objects)
	testrun.Closed(t, objects.Ready(), "widgets informer ready")
	want := map[string]any{"ready": true, "replicas": 2} // an int: compared as JSON

	for _, tt := range []struct {
		name    string
		race    func(ctx context.Context, w *unstructured.Unstructured) error
		updates int64
	}{
		{"someone labels it", func(ctx context.Context, w *unstructured.Unstructured) error {
			w.SetLabels(map[string]string{"raced": "yes"})
			_, err := widgets.Update(ctx, w, metav1.UpdateOptions{})
			return err
		}, 1},
		{"someone writes the status wanted", func(ctx context.Context, w *unstructured.Unstructured) error {
			w.SetLabels(map[string]string{"raced": "yes"})
			w.Object["status"] = map[string]any{"ready": true, "replicas": int64(2)}
			if _, err := widgets.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
				return err
			}
			w, err := widgets.Get(ctx, w.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			w.Object["status"] = map[string]any{"ready": true, "replicas": int64(2)}
			_, err = widgets.UpdateStatus(ctx, w, metav1.UpdateOptions{})
			return err
		}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("w%d", len(tt.name))
			w := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "test.switchyard.dev/v1", "kind": "Widget",
				"metadata": map[string]any{"name": name, "namespace": "default"},
				"spec":     map[string]any{"size": int64(1)},
			}}
			ctx := testrun.Context(t, testrun.Timeout)
			if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			k := types.NamespacedName{Namespace: "default", Name: name}
			testrun.State(t, objects.Output(), func(s watchable.State[types.NamespacedName, *unstructured.Unstructured]) string {
				if _, ok := s.Get(k); !ok {
					return "the informer has not seen " + k.String()
				}
				return ""
			})

			var updates, conflicts atomic.Int64
			var once sync.Once // the other client changes the object once
			target := status.Unstructured(dyn, kubetest.WidgetResource)
			plain := target.Client
			target.Client = func(ns string) status.Client[*unstructured.Unstructured] {
				return racing{Client: plain(ns), once: &once, updates: &updates, conflicts: &conflicts,
					race: func(ctx context.Context) {
						cur, err := widgets.Get(ctx, name, metav1.GetOptions{})
						if err == nil {
							err = tt.race(ctx, cur)
						}
						if err != nil {
							t.Errorf("race: %v", err)
						}
					}}
			}
			desired := &watchable.Map[types.NamespacedName, map[string]any]{}
			desired.Store(k, want)
			e := newElector()
			writer := status.NewWriter("widget-status", objects.Output(), desired.View(), target, e, status.WithLogger(testrun.Quiet))
			idle := make(chan struct{}, 1)
			status.SetIdle(writer, func() {
				select {
				case idle <- struct{}{}:
				default:
				}
			})
			stop := testrun.Run(t, writer)
			e.grant(t, 1)
			var got *unstructured.Unstructured
			testrun.Until(t, func() string {
				var err error
				if got, err = widgets.Get(ctx, name, metav1.GetOptions{}); err != nil {
					return err.Error()
				}
				s, _, _ := unstructured.NestedMap(got.Object, "status")
				if diff := cmp.Diff(map[string]any{"ready": true, "replicas": int64(2)}, s); diff != "" {
					return "status (-want +got):\n" + diff
				}
				return ""
			})
			testrun.Closed(t, onceFrom(idle), "writer idle")
			stop()
			if got.GetLabels()["raced"] != "yes" {
				t.Errorf("labels %v: the writer's update undid the other change", got.GetLabels())
			}
			if n := conflicts.Load(); n < 1 || n > 2 {
				t.Errorf("%d conflicts, want 1 (or 2, see above)", n)
			}
			if n := updates.Load(); n != tt.updates {
				t.Errorf("%d status updates accepted, want %d", n, tt.updates)
			}
		})
	}
}
