#!/usr/bin/env bash
# Builds kube-apiserver at the Kubernetes release pinned in apiserver/go.mod,
# once, into a cache directory; puts the etcd server built by
# etcd/hack/etcd.sh next to it; and prints that directory as its last line.
#
#   dir=$(kube/hack/apiserver.sh | tail -n1)
#   # then SWITCHYARD_KUBE_ASSETS=$dir (or KUBEBUILDER_ASSETS=$dir for envtest)
#
# Everything comes from the Go module proxy. A cold build takes about five
# minutes on two cores and 2 GB of memory; later runs reuse the binary.
#
# Cache: $SWITCHYARD_KUBE_DIR if set, else $SWITCHYARD_CACHE_DIR/kube, else
# <user cache dir>/switchyard/kube. A build is reused while the pins it was
# made from (apiserver/go.mod and go.sum) are unchanged.
set -euo pipefail

hack=$(cd "$(dirname "$0")" && pwd)
src=$hack/apiserver
cache=${SWITCHYARD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/switchyard}
out=${SWITCHYARD_KUBE_DIR:-$cache/kube}
stamp=$(cat "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-16)

etcd_dir=$("$hack/../../etcd/hack/etcd.sh" | tail -n1)

if [ -x "$out/kube-apiserver" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "apiserver.sh: reusing $out/kube-apiserver" >&2
else
  version=$(cd "$src" && GOWORK=off go list -mod=readonly -m -f '{{.Version}}' k8s.io/kubernetes)
  major=${version#v}; major=${major%%.*}
  minor=${version#v*.}; minor=${minor%%.*}

  mkdir -p "$(dirname "$out")"
  tmp=$(mktemp -d "$out.tmp.XXXXXX")
  chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT

  echo "apiserver.sh: building kube-apiserver $version into $out (a few minutes cold)" >&2
  pkg=k8s.io/component-base/version
  (
    cd "$src"
    # The build must not depend on a go.work above this directory.
    export GOWORK=off CGO_ENABLED=0
    go build -mod=readonly -trimpath \
      -ldflags "-X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean" \
      -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
  "$tmp/kube-apiserver" --version >&2
  echo "$stamp" >"$tmp/.stamp"

  rm -rf "$out"
  mv "$tmp" "$out"
  trap - EXIT
fi

# envtest and our fixture both look for etcd beside kube-apiserver.
if ! cmp -s "$etcd_dir/etcd" "$out/etcd"; then
  cp -f "$etcd_dir/etcd" "$out/etcd.new"
  mv -f "$out/etcd.new" "$out/etcd"
fi
echo "$out"
