#!/usr/bin/env bash
# Saloon developer entry point; sets itself up on a fresh Debian machine.
#   bash deploy/dev.sh demo   set up, then play a seeded match of house bots
#   bash deploy/dev.sh test   set up, then lint, type-check and run the whole test suite
#   bash deploy/dev.sh setup  only create .venv and install the project (editable, with dev tools)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'dev.sh: %s\n' "$*" >&2; }

ensure_python() {
  if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
     && python3 -c 'import venv, ensurepip' 2>/dev/null; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing python3 and python3-venv with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  else
    log "need Python >= 3.11 with venv (Debian: apt-get install python3 python3-venv)"; exit 1
  fi
}

setup() {
  if [ ! -x .venv/bin/python ]; then
    ensure_python
    log "creating .venv"
    python3 -m venv .venv
  fi
  # Reinstall only when the project's metadata changed since the last install.
  local stamp=.venv/.saloon-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    log "installing saloon (editable) with its dev tools"
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
    touch "$stamp"
  fi
}

demo() {
  setup
  .venv/bin/saloon play seas-of-strife-v1 \
    --seat house:greedy --seat house:random --seat house:random --seat house:greedy --seed 7
}

run_tests() {
  setup
  log "ruff"
  .venv/bin/ruff check .
  .venv/bin/ruff format --check . >/dev/null || { .venv/bin/ruff format --check .; exit 1; }
  log "mypy"
  bash .ci/typecheck
  log "pytest"
  .venv/bin/python -m pytest "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  demo) demo "$@" ;;
  test) run_tests "$@" ;;
  setup) setup ;;
  *) echo "usage: bash deploy/dev.sh demo|test|setup" >&2; exit 2 ;;
esac
