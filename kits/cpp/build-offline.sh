#!/usr/bin/env bash
# Build the C++ bot runtime image without a registry (nothing is pulled):
#   1. the bot root file system (saloon-bot-rootfs:bookworm, debootstrap; made by
#      deploy/bot-image/build-offline.sh when missing);
#   2. Debian's g++ 12, gRPC 1.51 (libgrpc++-dev, protobuf-compiler-grpc) and nlohmann/json
#      installed into it (apt, from Debian's archive);
#   3. the bot protocol's code generated (protoc, grpc_cpp_plugin) and compiled with the
#      runtime library (src/runtime.cpp) into /opt/saloon/cpp/lib/libsaloon.a, beside the
#      headers a bot includes (include/saloon: saloon.hpp and each game's typed views), so
#      a bot's build compiles only the bot's own files, offline.
# Needs root and an engine.   bash kits/cpp/build-offline.sh TAG
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
cp -r "$here/proto" "$here/include" "$here/src" "$here/build.sh" "$work/ctx/"
# The steps after FROM are the Dockerfile's own (kept in step with it by a test).
sed -n '/^# -- runtime --/,$p' "$here/Dockerfile" >"$work/body"
{ echo "FROM $rootfs_tag"; cat "$work/body"; } >"$work/ctx/Dockerfile"
docker build -q --force-rm -t "$tag" "$work/ctx" >/dev/null
echo "$tag"
