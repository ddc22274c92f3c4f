// Package apiserver holds no code: its module pins the release that
// ../apiserver.sh builds (see go.mod). The package exists so that go vet ./...
// run in this directory has something to check.
package apiserver
