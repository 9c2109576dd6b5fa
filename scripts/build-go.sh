#!/usr/bin/env bash
# Builds the real programs the sandbox and the tests run, from their Go modules (test/go/*/go.mod):
# kube-apiserver and kube-controller-manager, etcd/etcdctl/etcdutl of each etcd minor we test, and
# Knative Eventing's controllers, webhook, adapters and data plane (test/go/knative).
# Each module's binaries go into a cache outside the clone, keyed by that module's go.sum, so a
# second run (or a warm CI) builds nothing. Prints where they are; nothing is installed system-wide.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${ETCDFN_GO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcdfn/go}"
need_minor=26

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go 1.$need_minor or newer is needed to build kube-apiserver and etcd (https://go.dev/doc/install); none found on PATH" >&2
  exit 1
fi
have="$(go env GOVERSION)"
minor="$(echo "$have" | sed -E 's/^go1\.([0-9]+).*/\1/')"
if ! [[ "$minor" =~ ^[0-9]+$ ]] || [ "$minor" -lt "$need_minor" ]; then
  echo "setup: Go 1.$need_minor or newer is needed to build kube-apiserver and etcd; this machine has $have (https://go.dev/doc/install)" >&2
  exit 1
fi

export GOFLAGS="-mod=mod -trimpath"
export CGO_ENABLED=0
kube_version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$root/test/go/kube/go.mod")"

build_module() { # <module dir name>
  local name="$1" dir="$root/test/go/$1"
  local key out
  key="$(cat "$dir/go.mod" "$dir/go.sum" "$0" | sha256sum | cut -c1-16)"
  out="$cache/$name-$key"
  if [ -f "$out/.done" ]; then
    echo "$name: cached in $out"
    ln -sfn "$out" "$cache/$name"
    return
  fi
  rm -rf "$out.tmp" && mkdir -p "$out.tmp"
  local start=$SECONDS
  (
    cd "$dir"
    case "$name" in
      kube)
        local v="${kube_version#v}" ld=""
        for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
          ld="$ld -X $p.gitVersion=$kube_version -X $p.gitMajor=${v%%.*} -X $p.gitMinor=$(echo "$v" | cut -d. -f2) -X $p.gitTreeState=clean"
        done
        go build -ldflags "-s -w $ld" -o "$out.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
        go build -ldflags "-s -w $ld" -o "$out.tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
        ;;
      etcd-*)
        go build -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3
        go build -ldflags "-s -w" -o "$out.tmp/etcdctl" go.etcd.io/etcd/etcdctl/v3
        go build -ldflags "-s -w" -o "$out.tmp/etcdutl" go.etcd.io/etcd/etcdutl/v3
        ;;
      knative)
        # one binary per program, named after the Deployment (or adapter) that runs it in a cluster
        local eventing=knative.dev/eventing/cmd
        for b in eventing-controller:controller eventing-webhook:webhook \
          apiserver-receive-adapter:apiserver_receive_adapter pingsource-mt-adapter:mtping \
          imc-controller:in_memory/channel_controller imc-dispatcher:in_memory/channel_dispatcher \
          mt-broker-controller:mtchannel_broker mt-broker-ingress:broker/ingress \
          mt-broker-filter:broker/filter; do
          go build -ldflags "-s -w" -o "$out.tmp/${b%%:*}" "$eventing/${b#*:}"
        done
        ;;
    esac
  )
  touch "$out.tmp/.done"
  rm -rf "$out" && mv "$out.tmp" "$out"
  ln -sfn "$out" "$cache/$name"
  echo "$name: built in $((SECONDS - start)) s into $out ($(du -sh "$out" | cut -f1))"
}

mkdir -p "$cache"
for m in "$@"; do build_module "$m"; done
if [ $# -eq 0 ]; then
  for d in "$root"/test/go/*/; do build_module "$(basename "$d")"; done
fi
