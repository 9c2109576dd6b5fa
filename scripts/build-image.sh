#!/usr/bin/env bash
# Builds etcdfn's image with buildah (installed with apt-get if missing), pulling no base image: the
# runtime base is laid out here from the pinned Node.js binary and the shared libraries `ldd` lists
# for it, then `FROM scratch`. Writes an OCI archive, reports the image's size, and smoke-runs the image
# unless SMOKE=0: test/image/smoke.test.ts (each function, the CLI, read-only root) and
# test/image/standalone.test.ts (functions + bridge from the image drive a sandbox cluster to 3/3;
# the etcdfn-agent command).
#   IMAGE=registry.example.com/etcdfn:0.1.0 scripts/build-image.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
version="$(node -p 'require("./package.json").version')"
image="${IMAGE:-localhost/etcdfn:$version}"
archive="${ARCHIVE:-$root/.cache/image/etcdfn-$version.oci.tar}"
store="$root/.cache/buildah"
buildah=(buildah --root "$store/storage" --runroot "$store/run" --storage-driver vfs)

if ! command -v buildah >/dev/null; then
  echo "image: installing buildah with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah >/dev/null
fi
bash scripts/install-node.sh --always
node_bin="$root/.cache/node/bin/node"

# The runtime base: node, what it links against, a passwd/group with the numeric user, /tmp.
base=.cache/image/base
rm -rf "$base" .cache/image/npm
mkdir -p "$base/usr/local/bin" "$base/etc" "$base/tmp" "$base/app"
chmod 1777 "$base/tmp"
cp "$node_bin" "$base/usr/local/bin/node"
for lib in $(ldd "$node_bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
  mkdir -p "$base$(dirname "$lib")"
  cp -L "$lib" "$base$lib"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\netcdfn:x:65532:65532:etcdfn:/nonexistent:/sbin/nologin\n' >"$base/etc/passwd"
printf 'root:x:0:\netcdfn:x:65532:\n' >"$base/etc/group"
printf 'hosts: files dns\n' >"$base/etc/nsswitch.conf"
# npm for the build stage only.
cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." .cache/image/npm

echo "image: building $image"
"${buildah[@]}" bud --isolation chroot --layers=false -f Containerfile -t "$image" \
  -v "$(npm config get cache):/npm-cache" .
"${buildah[@]}" rmi --prune >/dev/null 2>&1 || true # the previous build's untagged image
mkdir -p "$(dirname "$archive")"
rm -f "$archive"
"${buildah[@]}" push -q "$image" "oci-archive:$archive:$image"
size="$("${buildah[@]}" images --format '{{.Size}}' "$image" | head -1)"
echo "image: $image, $size unpacked; OCI archive $(du -h "$archive" | cut -f1) at ${archive#"$root"/}"

if [ "${SMOKE:-1}" != "0" ]; then
  ETCDFN_IMAGE="$image" ETCDFN_BUILDAH_STORE="$store" LOG_LEVEL=warn \
    scripts/with-node node --import tsx --test --test-concurrency=1 --test-reporter=spec \
    test/image/smoke.test.ts test/image/standalone.test.ts
fi
