// Package etcdtest gives tests a real etcd: an embedded server for fast tests
// of behaviour, and a server process for tests of failure (killed with
// SIGKILL and restarted on the same data directory and ports).
//
// Everything a helper starts is stopped by the test's cleanup, and clients
// are closed before the server they talk to. Servers listen on free ports of
// 127.0.0.1 and keep their data in the test's temporary directory, without
// fsync: a killed process loses nothing (its writes are in the kernel's page
// cache), only a machine crash would.
//
// The process helpers need the etcd binary built by etcd/hack/etcd.sh. They
// find it through SWITCHYARD_ETCD_BIN, else in the script's default cache
// directory; without it the test skips, or fails when
// SWITCHYARD_REQUIRE_INTEGRATION=1 (see internal/integration).
package etcdtest
