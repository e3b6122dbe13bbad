#!/usr/bin/env bash
# Build the bot base image with deploy/bot-image/Dockerfile (needs a registry for the
# python:3.11-slim-bookworm base). Tag: what saloon.worker.sandbox.images expects, or $1.
#   bash deploy/bot-image/build.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PY:-.venv/bin/python}"
tag="${1:-$("$PY" -m saloon.worker.sandbox.images --base-tag)}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
bash deploy/bot-image/wheels.sh "$ctx/wheels"
cp deploy/bot-image/Dockerfile "$ctx/Dockerfile"
docker build -q --force-rm -t "$tag" "$ctx"
echo "$tag"
