#!/usr/bin/env bash
# Fetches etcd 3.4 (end of life; kept only to test upgrading away from it) from Debian bookworm into
# .cache/etcd/3.4/ without installing anything on the system: a private apt sources list,
# `apt-get download` and `dpkg -x`. 3.5, 3.6 and 3.7 are built from their Go modules by
# scripts/build-go.sh. Safe to run again; it skips a release already unpacked.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${ETCDFN_CACHE:-$root/.cache}"
mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
mirror="${mirror:-http://deb.debian.org/debian}"

fetch() { # <suite> <minor>
  local suite="$1" minor="$2" dir="$cache/apt-$1" out="$cache/etcd/$2"
  if [ -x "$out/usr/bin/etcd" ]; then
    echo "etcd $minor: $("$out/usr/bin/etcd" --version | head -1) (cached)"
    return
  fi
  mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$out"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$dir/sources.list"
  local opts=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
  apt-get "${opts[@]}" -qq update
  (cd "$dir" && rm -f etcd-*.deb && apt-get "${opts[@]}" -qq download etcd-server etcd-client)
  for f in "$dir"/etcd-*.deb; do dpkg -x "$f" "$out"; done
  echo "etcd $minor: $("$out/usr/bin/etcd" --version | head -1)"
}

fetch bookworm 3.4
