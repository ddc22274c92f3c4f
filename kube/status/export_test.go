package status

import "github.com/switchyard-go/switchyard/kube/informer"

// SetIdle makes w call fn whenever it has nothing left to do: a test can
// then tell that the writer decided not to write.
func SetIdle[V informer.Object, S any](w *Writer[V, S], fn func()) { w.idle = fn }
