#!/usr/bin/env bash
# Builds the etcd server and etcdctl at the versions pinned in etcdbin/go.mod,
# once, into a cache directory, and prints that directory as its last line.
#
#   dir=$(etcd/hack/etcd.sh | tail -n1)   # then: SWITCHYARD_ETCD_BIN=$dir/etcd
#
# The binaries come from the Go module proxy only: etcdbin is a module of its
# own that names the etcd commands as tools, because `go install` refuses
# etcd's modules (their go.mod files carry replace directives).
#
# Cache: $SWITCHYARD_ETCD_DIR if set, else $SWITCHYARD_CACHE_DIR/etcd, else
# <user cache dir>/switchyard/etcd. A build is reused while the pins it was
# made from (etcdbin/go.mod and go.sum) are unchanged.
set -euo pipefail

src=$(cd "$(dirname "$0")/etcdbin" && pwd)
cache=${SWITCHYARD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/switchyard}
out=${SWITCHYARD_ETCD_DIR:-$cache/etcd}
stamp=$(cat "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-16)

if [ -x "$out/etcd" ] && [ -x "$out/etcdctl" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "etcd.sh: reusing $out" >&2
  echo "$out"
  exit 0
fi

mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d "$out.tmp.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

echo "etcd.sh: building etcd and etcdctl into $out" >&2
(
  cd "$src"
  # The build must not depend on a go.work above this directory.
  export GOWORK=off CGO_ENABLED=0
  go build -mod=readonly -trimpath -o "$tmp/etcd" go.etcd.io/etcd/server/v3
  go build -mod=readonly -trimpath -o "$tmp/etcdctl" go.etcd.io/etcd/etcdctl/v3
)
"$tmp/etcd" --version >&2
echo "$stamp" >"$tmp/.stamp"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out"
