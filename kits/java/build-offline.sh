#!/usr/bin/env bash
# Build the Java bot runtime image without a registry (nothing is pulled):
#   1. the bot root file system (saloon-bot-rootfs:bookworm, debootstrap; made by
#      deploy/bot-image/build-offline.sh when missing);
#   2. Debian's OpenJDK 17 and Gson installed into it (apt, from Debian's archive, Gson
#      under /usr/share/java);
#   3. the runtime library (src/saloon: package saloon and each game's typed views) copied
#      in and compiled once into /opt/saloon/java/saloon.jar, so a bot's build compiles
#      only the bot's own files, offline.
# Needs root and an engine.   bash kits/java/build-offline.sh TAG
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="$1"
rootfs_tag="saloon-bot-rootfs:bookworm"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! docker image inspect "$rootfs_tag" >/dev/null 2>&1; then
  bash "$here/../../deploy/bot-image/build-offline.sh" >/dev/null
fi
mkdir -p "$work/ctx"
cp -r "$here/src" "$here/build.sh" "$here/classpath" "$here/classes.lst" "$here/jvm.args" "$work/ctx/"
# The steps after FROM are the Dockerfile's own (kept in step with it by a test).
sed -n '/^# -- runtime --/,$p' "$here/Dockerfile" >"$work/body"
{ echo "FROM $rootfs_tag"; cat "$work/body"; } >"$work/ctx/Dockerfile"
docker build -q --force-rm -t "$tag" "$work/ctx" >/dev/null
echo "$tag"
