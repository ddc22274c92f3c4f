// Package kubetest gives tests a real Kubernetes API server: etcd and
// kube-apiserver started as processes, a *rest.Config for an administrator,
// and control over the processes, so that a test can kill the API server
// with SIGKILL and start it again on the same etcd.
//
// The binaries come from kube/hack/apiserver.sh, which builds kube-apiserver
// and puts the etcd of etcd/hack/etcd.sh beside it. They are looked for in
// $SWITCHYARD_KUBE_ASSETS, then $KUBEBUILDER_ASSETS, then the script's default
// cache directory. Without them a test skips, naming the script, or fails
// when SWITCHYARD_REQUIRE_INTEGRATION=1 (see internal/integration).
//
// It is public so that the tests of programs built on the kube module (the
// repository's examples, or a user's) can use it too.
//
// There is no controller manager and no scheduler: objects are stored and
// watched, nothing reconciles them. Pods can be created (the ServiceAccount
// admission plugin is off) but never run.
package kubetest
