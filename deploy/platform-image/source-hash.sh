#!/usr/bin/env bash
# The platform image's source label: a hash of the code and pins it is built from (the
# Python packages, pyproject.toml, deploy/constraints.txt), so a script can tell whether
# an image holds this checkout's code.  bash deploy/platform-image/source-hash.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
find games sdk referee worker ratings arena -name '*.py' -o -name '*.html' -o -name '*.css' \
  -o -name '*.js' -o -name '*.ini' -o -name '*.mako' -o -name '*.json' | grep -v __pycache__ \
  | LC_ALL=C sort | xargs cat pyproject.toml deploy/constraints.txt | sha256sum | cut -c1-16
