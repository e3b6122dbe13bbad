#!/usr/bin/env bash
# Build the Node.js bot runtime image without a registry (nothing is pulled):
#   1. the bot root file system (saloon-bot-rootfs:bookworm, debootstrap; made by
#      deploy/bot-image/build-offline.sh when missing);
#   2. Debian's nodejs installed into it (apt, from Debian's archive);
#   3. the runtime (run.js, saloon/) and its npm packages, installed on this host with
#      `npm ci` from package-lock.json and copied in (vendored: nothing is fetched later);
#   4. node's start-up snapshot with the runtime loaded (snapshot.js), which every node in
#      the image starts from (NODE_OPTIONS).
# Needs root and an engine.   bash kits/js/build-offline.sh TAG
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="$1"
rootfs_tag="saloon-bot-rootfs:bookworm"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! docker image inspect "$rootfs_tag" >/dev/null 2>&1; then
  bash "$here/../../deploy/bot-image/build-offline.sh" >/dev/null
fi
mkdir -p "$work/ctx/js"
cp -r "$here/run.js" "$here/snapshot.js" "$here/package.json" "$here/package-lock.json" "$here/tsconfig.json" \
  "$here/saloon" "$work/ctx/js/"
(cd "$work/ctx/js" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
cat >"$work/ctx/Dockerfile" <<DOCKERFILE
FROM $rootfs_tag
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs >/dev/null \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /usr/share/doc/* /usr/share/man/*
COPY js/ /opt/saloon/js/
RUN echo 'bot:x:10001:10001:saloon bot:/tmp:/usr/sbin/nologin' >>/etc/passwd \\
 && echo 'bot:x:10001:' >>/etc/group \\
 && node -e 'require("/opt/saloon/js/saloon/runtime")' \\
 && node --snapshot-blob /opt/saloon/js/runtime.blob --build-snapshot /opt/saloon/js/snapshot.js
ENV HOME=/tmp NODE_ENV=production NODE_OPTIONS="--snapshot-blob /opt/saloon/js/runtime.blob"
USER 10001:10001
WORKDIR /tmp
LABEL saloon=1 saloon.role=bot-base saloon.language=javascript
DOCKERFILE
docker build -q --force-rm -t "$tag" "$work/ctx" >/dev/null
echo "$tag"
