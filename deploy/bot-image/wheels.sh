#!/usr/bin/env bash
# Put the bot image's wheels in DIR: the project's own wheel and its runtime
# dependencies (grpcio, protobuf, orjson and what they need, e.g. typing-extensions) at the
# versions deploy/constraints.txt pins; no extras.
# Nothing of the platform (docker, rq, sqlalchemy, ...) goes in a bot image.
#   bash deploy/bot-image/wheels.sh DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$1"
PY="${PY:-.venv/bin/python}"
mkdir -p "$dir"
"$PY" -m pip wheel -q --disable-pip-version-check -c deploy/constraints.txt -w "$dir" .

