#!/usr/bin/env bash
# Build the bot base image without a registry (nothing is pulled):
#   1. debootstrap a minimal Debian bookworm with python3 (3.11) into a temporary folder and
#      `docker import` it as saloon-bot-rootfs:bookworm (once; kept for later builds);
#   2. install the project's wheel and grpcio/protobuf/orjson (cp311 manylinux wheels run
#      unchanged on bookworm's python3.11) into a folder on the host with pip --target;
#   3. `docker build` FROM the imported rootfs with that folder in the context, adding a
#      non-root user (uid 10001).
# Needs root (debootstrap) and an engine.  bash deploy/bot-image/build-offline.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PY:-.venv/bin/python}"
tag="${1:-$("$PY" -m saloon.worker.sandbox.images --base-tag)}"
rootfs_tag="saloon-bot-rootfs:bookworm"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! docker image inspect "$rootfs_tag" >/dev/null 2>&1; then
  echo "build-offline: debootstrap bookworm (minbase + python3) from $mirror" >&2
  debootstrap --variant=minbase --include=python3 bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  # What a bot never needs: package lists, docs, apt caches.
  rm -rf "$work"/rootfs/var/lib/apt/lists/* "$work"/rootfs/var/cache/apt/* \
    "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/* "$work"/rootfs/usr/share/locale/*
  tar -C "$work/rootfs" -c . | docker import \
    --change 'LABEL saloon=1 saloon.role=bot-rootfs' --change 'CMD ["python3"]' - "$rootfs_tag" >/dev/null
  rm -rf "$work/rootfs"
fi

echo "build-offline: wheels and site-packages" >&2
bash deploy/bot-image/wheels.sh "$work/wheels"
mkdir -p "$work/ctx"
"$PY" -m pip install -q --disable-pip-version-check --no-deps --no-index \
  --target "$work/ctx/site" "$work"/wheels/*.whl
# A bot talks the bot protocol only: the arena API's generated code stays out of its image.
rm -rf "$work/ctx/site/saloon/sdk/arena_proto"
cat >"$work/ctx/Dockerfile" <<DOCKERFILE
FROM $rootfs_tag
COPY site/ /usr/local/lib/python3.11/dist-packages/
RUN echo 'bot:x:10001:10001:saloon bot:/tmp:/usr/sbin/nologin' >>/etc/passwd \\
 && echo 'bot:x:10001:' >>/etc/group \\
 && python3 -c 'import saloon.sdk.run, grpc, google.protobuf, orjson'
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp
USER 10001:10001
WORKDIR /tmp
LABEL saloon=1 saloon.role=bot-base
DOCKERFILE
docker build -q --force-rm -t "$tag" "$work/ctx" >/dev/null
echo "$tag"
