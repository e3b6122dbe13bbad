#!/usr/bin/env bash
# Saloon developer entry point; sets itself up on a fresh Debian machine.
#   bash deploy/dev.sh demo   set up, then play a short house-bot season of every game
#   bash deploy/dev.sh test   set up, then lint, type-check and run the whole test suite
#   bash deploy/dev.sh setup  only create .venv and install the project (editable, with dev tools)
#   bash deploy/dev.sh rehearse  set up, then rehearse workers on other hosts (two worker
#                             containers, one killed mid-match; docs/operator-guide.md)
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
  setup_venv
}

# .venv with the project installed (editable, dev tools), from the lock.
setup_venv() {
  if [ ! -x .venv/bin/python ]; then
    ensure_python
    log "creating .venv"
    python3 -m venv .venv
  fi
  # Reinstall only when the project's metadata changed since the last install.
  # Every version comes from deploy/constraints.txt (the lock), never from "latest".
  local stamp=.venv/.saloon-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ deploy/constraints.txt -nt "$stamp" ]; then
    log "installing saloon-arena (editable) with its dev tools, pinned by deploy/constraints.txt"
    .venv/bin/python -m pip install -q --disable-pip-version-check \
      -c deploy/constraints.txt -e '.[dev]'
    touch "$stamp"
  fi
}

# Every Debian package the test command may need and this machine lacks, in one apt-get run
# (one `apt-get update`; the ensure_* functions below each install their own only when
# this did not, e.g. not root). Run in the background while pip installs the project.
ensure_host_packages() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 0
  local want=() lean=()
  command -v redis-server >/dev/null || want+=(redis-server)
  command -v dockerd >/dev/null || want+=(docker.io)
  command -v debootstrap >/dev/null || want+=(debootstrap)
  command -v npm >/dev/null || want+=(npm)
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || want+=(chromium)
  if ! command -v pg_ctl >/dev/null && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    mkdir -p /etc/postgresql-common
    [ -e /etc/postgresql-common/createcluster.conf ] ||
      echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
    want+=(postgresql)
  fi
  command -v prometheus >/dev/null && command -v promtool >/dev/null || lean+=(prometheus)
  [ ${#want[@]} -gt 0 ] || [ ${#lean[@]} -gt 0 ] || return 0
  log "installing ${want[*]} ${lean[*]} with apt-get (one run)"
  apt-get update -qq
  if [ ${#want[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Options::=--force-confold \
      "${want[@]}" >/dev/null
  fi
  if [ ${#lean[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
  fi
  # runsc is optional (the gVisor runtime): its absence must not stop anything.
  command -v runsc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >/dev/null 2>&1 || true
}

# The machine may run Redis already (127.0.0.1:6379); start one only when none answers.
ensure_redis() {
  if redis_answers; then return; fi
  if ! command -v redis-server >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing redis-server with apt-get"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    else
      log "no Redis at 127.0.0.1:6379 and no redis-server to start: Redis tests will skip"; return
    fi
  fi
  log "starting redis-server on 127.0.0.1:6379"
  mkdir -p .run
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir "$PWD/.run" --logfile "$PWD/.run/redis.log" --pidfile "$PWD/.run/redis.pid"
  for _ in $(seq 50); do redis_answers && return; sleep 0.1; done
  log "redis-server did not answer; see .run/redis.log"; exit 1
}

# The HTML leaderboard test and the web side's browser tests (Playwright, executable_path)
# use Debian's headless chromium; install it when missing (as root with apt-get only;
# elsewhere those tests skip loudly, or fail under CI).
ensure_chromium() {
  if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing chromium with apt-get (headless browser for the HTML leaderboard test)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    log "no chromium and not root: the HTML leaderboard test will skip (fail under CI=true)"
  fi
}

# The outage tests crash a private PostgreSQL cluster of their own (initdb + pg_ctl, as
# the postgres user when root): install the server programs when missing (as root with
# apt-get only, and without creating or starting Debian's default cluster; elsewhere those
# tests skip loudly, or fail under CI).
ensure_postgres_server() {
  if command -v pg_ctl >/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing the PostgreSQL server programs with apt-get (the outage tests)"
    mkdir -p /etc/postgresql-common
    [ -e /etc/postgresql-common/createcluster.conf ] ||
      echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      -o Dpkg::Options::=--force-confold postgresql >/dev/null
  else
    log "no pg_ctl and not root: the database outage tests will skip (fail under CI=true)"
  fi
}

# The monitoring test (tests/integration/test_prometheus.py) starts Debian's prometheus and
# promtool (its own process on a free port, stopped by pid); install them when missing.
ensure_prometheus() {
  if command -v prometheus >/dev/null && command -v promtool >/dev/null; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing prometheus with apt-get (the monitoring test scrapes a running arena)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    log "no prometheus and not root: the monitoring test will skip (fail under CI=true)"
  fi
}

redis_answers() {
  .venv/bin/python - <<'PY' 2>/dev/null
import socket
s = socket.create_connection(("127.0.0.1", 6379), timeout=1)
s.sendall(b"PING\r\n")
raise SystemExit(0 if s.recv(16).startswith(b"+PONG") else 1)
PY
}

# The Docker engine the sandbox tests need. As root on Debian: install docker.io when
# dockerd is missing, start dockerd in the background (its own log and pid file under .run/)
# when no engine answers. gVisor (runsc) is registered as an optional runtime when present.
ensure_docker() {
  if docker_answers; then return; fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    log "no Docker engine answers and not root on Debian: Docker tests will skip"; return
  fi
  local want=()
  command -v dockerd >/dev/null || want+=(docker.io)
  command -v runsc >/dev/null || want+=(runsc)
  if [ ${#want[@]} -gt 0 ]; then
    log "installing ${want[*]} with apt-get"
    apt-get update -qq
    # runsc is optional (the gVisor runtime): its absence must not stop the engine.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
  fi
  mkdir -p .run
  local args=(--log-level=warn --pidfile "$PWD/.run/dockerd.pid")
  if command -v runsc >/dev/null; then
    # gVisor as the optional runtime "runsc": no network of its own, and the bot may create
    # the unix socket in its mounted socket directory (--host-uds=create).
    printf '{"runtimes": {"runsc": {"path": "%s", "runtimeArgs": ["--network=none", "--host-uds=create"]}}}\n' \
      "$(command -v runsc)" >.run/daemon.json
    args+=(--config-file "$PWD/.run/daemon.json")
  fi
  log "starting dockerd (log .run/dockerd.log, pid .run/dockerd.pid)"
  nohup dockerd "${args[@]}" >"$PWD/.run/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 120); do docker_answers && return; sleep 0.25; done
  log "dockerd did not answer within 30 s; see .run/dockerd.log"; exit 1
}

docker_answers() {
  .venv/bin/python -c 'import docker; docker.from_env(timeout=5).ping()' >/dev/null 2>&1
}

ensure_debootstrap() {
  docker image inspect saloon-bot-rootfs:bookworm >/dev/null 2>&1 && return
  command -v debootstrap >/dev/null && return
  log "installing debootstrap with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

# build_offline WHAT TAG SCRIPT [ARGS...]: unless the engine has image TAG, build it
# offline with `bash SCRIPT TAG ARGS...` (debootstrap installed first).
build_offline() {
  local what=$1 tag=$2 script=$3
  shift 3
  if docker image inspect "$tag" >/dev/null 2>&1; then return; fi
  ensure_debootstrap
  log "building $what $tag offline"
  bash "$script" "$tag" "$@"
}

# The bot base image (python3 + the SDK runtime; debootstrap, ~1 min), built offline when
# missing.
ensure_base_image() {
  docker_answers || return 0
  build_offline "the bot base image" \
    "$(.venv/bin/python -m saloon.worker.sandbox.images --base-tag)" \
    deploy/bot-image/build-offline.sh
}

# The platform image (saloon serve / worker; ~30 s), built offline when missing, on the bot
# base image's rootfs; its tag is a hash of what goes into it (deploy/platform-image/). The
# rehearsal test (tests/integration/test_multi_host.py) runs its workers from it.
ensure_platform_image() {
  docker_answers || return 0
  build_offline "the platform image" "$(bash deploy/platform-image/source-hash.sh --tag)" \
    deploy/platform-image/build-offline.sh >/dev/null
}

# The runtime images of the other languages (kits/*/build-offline.sh, each tagged by a hash of
# its kit's files), built offline when missing. The Node.js kit's npm packages come from its
# package-lock.json (npm ci): npm is installed with apt-get when missing.
ensure_kit_images() {
  docker_answers || return 0
  local tag script
  while read -r tag script; do
    if docker image inspect "$tag" >/dev/null 2>&1; then continue; fi
    if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing npm with apt-get (the Node.js runtime's packages)"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
    fi
    build_offline "the runtime image" "$tag" "$script" >/dev/null
  done < <(.venv/bin/python -m saloon.worker.sandbox.runtimes --kits)
}

demo() {
  setup
  # In-process queue, SQLite in a temporary folder: no Redis or Docker needed.
  .venv/bin/saloon demo "$@"
}

run_tests() {
  mkdir -p .run
  ensure_python
  # The machine's packages (apt) and the project's (pip) download at the same time.
  ensure_host_packages >.run/apt.log 2>&1 &
  local apt_pid=$!
  setup_venv
  wait "$apt_pid" || { log "apt-get failed:"; tail -20 .run/apt.log >&2; exit 1; }
  grep '^dev.sh:' .run/apt.log >&2 || true
  ensure_redis
  ensure_docker
  ensure_base_image
  # The platform image is built while the linters run; the runtime images of the other
  # languages (minutes each on a fresh machine) while the suite runs: the tests that need
  # them are marked kit_images, run last and wait for this build's exit status
  # (tests/conftest.py, tests/services.py), their log in .run/kit-images.log.
  ensure_platform_image >.run/platform-image.log 2>&1 &
  local platform_pid=$!
  rm -f .run/kit-images.rc
  # Its own process group (setsid), ended by its id if the suite stops first.
  setsid bash deploy/dev.sh kit-images "$PWD/.run/kit-images.rc" >.run/kit-images.log 2>&1 &
  KITS_PID=$!
  trap 'kill -- "-${KITS_PID:-0}" 2>/dev/null || true' EXIT
  export SALOON_KIT_IMAGES_RC="$PWD/.run/kit-images.rc"
  log "ruff"
  .venv/bin/ruff check .
  .venv/bin/ruff format --check . >/dev/null || { .venv/bin/ruff format --check .; exit 1; }
  log "mypy"
  bash .ci/typecheck
  log "import layers (import-linter, contracts in pyproject.toml)"
  .venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
  wait "$platform_pid" || { log "the platform image's build failed:"; tail -20 .run/platform-image.log >&2; exit 1; }
  ensure_chromium
  ensure_prometheus
  ensure_postgres_server
  # The suite runs on SALOON_TEST_WORKERS processes (pytest-xdist, default 3 on two cores:
  # most integration tests wait on containers, servers and subprocesses), a test module per
  # worker at a time (--dist loadfile: a module's fixtures and order stay as written);
  # arguments after `test` come after ours, so `-n 0` runs it in this one process. Then the
  # tests marked `exclusive` (they assert which process of the host swept what) run alone.
  log "pytest on ${SALOON_TEST_WORKERS:-3} workers (the runtime images build meanwhile: .run/kit-images.log)"
  local rc=0 alone=0
  .venv/bin/python -m pytest -n "${SALOON_TEST_WORKERS:-3}" --dist loadfile -m "not exclusive" "$@" || rc=$?
  log "pytest: the tests that need the host to themselves, alone"
  .venv/bin/python -m pytest -m exclusive "$@" -n 0 || alone=$?
  # 5: nothing selected in that part (e.g. `test tests/unit`), which is no failure.
  [ "$alone" = 5 ] && alone=0
  [ "$rc" = 5 ] && [ "$alone" = 0 ] && rc=0
  [ "$rc" = 0 ] && rc=$alone
  if [ -f .run/kit-images.rc ] && [ "$(cat .run/kit-images.rc)" != 0 ]; then
    log "the runtime images' build failed:"; tail -20 .run/kit-images.log >&2
  fi
  return "$rc"
}

# Workers on other hosts, rehearsed on this one: the integration test that does it, with
# each command it runs and each phase's time printed.
rehearse() {
  setup
  ensure_redis
  ensure_docker
  ensure_base_image
  ensure_platform_image
  .venv/bin/python -m pytest -s -v tests/integration/test_multi_host.py "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  demo) demo "$@" ;;
  test) run_tests "$@" ;;
  setup) setup ;;
  rehearse) rehearse "$@" ;;
  # Internal to `test`: build the missing runtime images, then write the exit status to $1.
  kit-images) trap 'echo $? >"$1"' EXIT; ensure_kit_images ;;
  *) echo "usage: bash deploy/dev.sh demo|test|setup|rehearse" >&2; exit 2 ;;
esac
