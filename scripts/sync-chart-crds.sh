#!/usr/bin/env bash
# Copies crds/ into charts/etcdfn/crds/ (Helm installs a chart's crds/ before its templates and
# never templates them), so the chart's CRDs are byte-identical to the project's. Run it after any
# change to crds/; test/integration/helm.test.ts fails while the copies differ.
#   scripts/sync-chart-crds.sh          copy (and remove chart CRDs that crds/ no longer has)
#   scripts/sync-chart-crds.sh --check  exit 1, listing the differences, if the copies are stale
set -euo pipefail
cd "$(dirname "$0")/.."
src=crds
dst=charts/etcdfn/crds

if [[ "${1:-}" == "--check" ]]; then
  if diff -r "$src" "$dst"; then
    echo "charts/etcdfn/crds is in sync with crds/"
    exit 0
  fi
  echo "charts/etcdfn/crds differs from crds/: run scripts/sync-chart-crds.sh" >&2
  exit 1
fi
if [[ $# -gt 0 ]]; then
  echo "usage: $0 [--check]" >&2
  exit 2
fi

mkdir -p "$dst"
for file in "$dst"/*.yaml; do
  [[ -e "$file" ]] || continue
  [[ -e "$src/$(basename "$file")" ]] || rm -v "$file"
done
cp -v "$src"/*.yaml "$dst"/
