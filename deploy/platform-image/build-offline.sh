#!/usr/bin/env bash
# Build the platform image (`saloon serve`, `saloon worker`) without a registry, the same
# way as the bot base image (deploy/bot-image/build-offline.sh; nothing is pulled):
#   1. the debootstrapped bookworm rootfs saloon-bot-rootfs:bookworm (python3 3.11), made
#      by the bot image's script when missing;
#   2. the project's wheel with its `arena` extra, at the versions deploy/constraints.txt
#      pins, installed into a folder on the host with pip --target (cp311 manylinux wheels
#      run unchanged on bookworm's python3.11);
#   3. `docker build` FROM the rootfs with that folder and a `saloon` command.
# Tagged saloon-platform:<version>-<hash of what goes into it> (source-hash.sh --tag; the
# tag deploy/dev.sh builds when missing and the rehearsal test runs) and, when no TAG is
# given, also saloon-platform:<version>, compose.yaml's image, for an operator.
# Needs root (debootstrap, once) and an engine.  bash deploy/platform-image/build-offline.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PY:-.venv/bin/python}"
source_tag="$(bash deploy/platform-image/source-hash.sh --tag)"  # before the copy below
tag="${1:-$source_tag}"
rootfs_tag="saloon-bot-rootfs:bookworm"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! docker image inspect "$rootfs_tag" >/dev/null 2>&1; then
  bash deploy/bot-image/build-offline.sh >/dev/null  # makes the rootfs on the way
fi

echo "build-offline: platform wheels and site-packages" >&2
# async-timeout: redis-py needs it below Python 3.11.3 (bookworm has 3.11.2), a marker the
# host's newer Python skips.
# From a clean copy of the checkout's files (tracked or new, not ignored): a stale build/
# folder would otherwise slip old modules into the wheel.
mkdir -p "$work/src"
git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -C "$work/src" -xf -
"$PY" -m pip wheel -q --disable-pip-version-check -c deploy/constraints.txt -w "$work/wheels" \
  "$work/src[arena]" async-timeout
mkdir -p "$work/ctx"
"$PY" -m pip install -q --disable-pip-version-check --no-deps --no-index \
  --target "$work/ctx/site" "$work"/wheels/*.whl
rm -rf "$work/ctx/site/bin"  # console scripts name the host's python: the image has its own
cat >"$work/ctx/saloon" <<'SCRIPT'
#!/usr/bin/python3
import sys

from saloon.arena.cli import main

sys.exit(main())
SCRIPT
cat >"$work/ctx/Dockerfile" <<DOCKERFILE
FROM $rootfs_tag
COPY site/ /usr/local/lib/python3.11/dist-packages/
COPY saloon /usr/local/bin/saloon
RUN chmod 755 /usr/local/bin/saloon && saloon --help >/dev/null && python3 -m saloon.worker.sandbox.images --base-tag >/dev/null
ENV PYTHONUNBUFFERED=1 SALOON_PACKAGE_CACHE=/var/cache/saloon
# Root in the container, as deploy/Dockerfile's: the referee reads each bot's socket in
# the engine's volume folder (root-only); whoever holds the Docker socket is root anyway.
WORKDIR /var/lib/saloon
LABEL saloon.role=platform saloon.source=${source_tag##*-}
CMD ["saloon", "--help"]
DOCKERFILE
docker build -q --force-rm -t "$tag" "$work/ctx" >/dev/null
if [ $# -eq 0 ]; then
  docker tag "$tag" "${source_tag%-*}"  # saloon-platform:<version>, as compose.yaml names it
fi
echo "$tag"
