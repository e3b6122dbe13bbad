#!/usr/bin/env bash
# What the platform image is built from, as a hash: the name and content of every file of
# the checkout that build-offline.sh copies into the wheel (the package folders,
# tracked or new, not ignored), pyproject.toml, setup.py, deploy/constraints.txt (the pins)
# and the build script itself. Its image is tagged with it, so an image of that tag holds
# this checkout's code (deploy/dev.sh builds it when missing, the rehearsal test uses it).
#   bash deploy/platform-image/source-hash.sh          # 12 hex
#   bash deploy/platform-image/source-hash.sh --tag    # saloon-platform:<version>-<12 hex>
set -euo pipefail
cd "$(dirname "$0")/../.."
inputs=(kits games sdk referee worker ratings arena pyproject.toml setup.py deploy/constraints.txt
  deploy/platform-image/build-offline.sh)
hash="$(git ls-files -z -co --exclude-standard -- "${inputs[@]}" | LC_ALL=C sort -zu \
  | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
  | xargs -0 sha256sum | sha256sum | cut -c1-12)"
if [ "${1:-}" = --tag ]; then
  version="$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -1)"
  echo "saloon-platform:$version-$hash"
else
  echo "$hash"
fi
