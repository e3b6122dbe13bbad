#!/usr/bin/env bash
# The multi-host shape, rehearsed on this machine: two worker containers of the platform
# image, each with a host name of its own, reaching this host's Redis and PostgreSQL and
# its Docker engine through the socket, as compose.yaml / compose.worker.yaml give it; a
# season of a slow bot in the Docker sandbox; `docker kill` of one worker mid-match. It
# passes when every match is recorded exactly once and the dead worker's bot containers
# are swept (by the surviving worker, whose host name differs).
#
#   bash deploy/rehearse.sh            # builds the images it lacks (offline), ~1-3 min
#
# Environment: SALOON_REHEARSAL_REDIS (default redis://127.0.0.1:6379/0),
# SALOON_REHEARSAL_PG (a database it may make a schema in; default the test database
# postgresql+psycopg://postgres@127.0.0.1:5432/test), REHEARSAL_REBUILD=1 (rebuild the
# platform image). Everything it starts carries the label saloon.rehearsal=<run id> and is
# removed by id at the end; the schema and the queue are its own.
#
# Host networking: this host's Redis and PostgreSQL listen on 127.0.0.1 here; on real
# worker machines compose.worker.yaml maps "postgres" and "redis" to the main host's
# private address instead. Docker gives each container its own host name either way.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
REDIS="${SALOON_REHEARSAL_REDIS:-redis://127.0.0.1:6379/0}"
PG="${SALOON_REHEARSAL_PG:-postgresql+psycopg://postgres@127.0.0.1:5432/test}"
run="rehearsal-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
queue="$run"
schema="${run//-/_}"
store="$PG?options=-csearch_path%3D$schema"
season="$run"
bots="$(mktemp -d)"
workers=()
say() { printf 'rehearse: %s\n' "$*" >&2; }

cleanup() {
  for worker in "${workers[@]}"; do
    # Bot containers the worker left (none when the rehearsal passed), then the worker.
    for id in $(docker ps -aq --filter "label=saloon.parent=$worker"); do
      docker rm -f "$id" >/dev/null 2>&1 || true
    done
    docker rm -f "$worker" >/dev/null 2>&1 || true
  done
  "$PY" - "$PG" "$schema" "$REDIS" "$queue" <<'PYTHON' || true
import sys

import sqlalchemy as sa

from saloon.worker.queue.season_queue import SeasonQueue, connect

pg, schema, redis, queue = sys.argv[1:]
engine = sa.create_engine(pg)
with engine.begin() as conn:
    conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
engine.dispose()
SeasonQueue(connect(redis), queue).purge()
PYTHON
  rm -rf "$bots"
}
trap cleanup EXIT

# 1. The images, built offline (nothing pulled): the bot base image and the platform image.
base="$("$PY" -m saloon.worker.sandbox.images --base-tag)"
docker image inspect "$base" >/dev/null 2>&1 || { say "building $base"; bash deploy/bot-image/build-offline.sh >/dev/null; }
version="$("$PY" -c 'from importlib.metadata import version; print(version("saloon-arena"))')"
platform="saloon-platform:$version"
source="$(bash deploy/platform-image/source-hash.sh)"
built="$(docker image inspect -f '{{index .Config.Labels "saloon.source"}}' "$platform" 2>/dev/null || true)"
if [ "${REHEARSAL_REBUILD:-0}" = 1 ] || [ "$built" != "$source" ]; then
  say "building $platform offline (this checkout's code: $source)"
  bash deploy/platform-image/build-offline.sh "$platform" >/dev/null
fi

# 2. A store schema and a season: a slow bot (each match ~1-2 s) against house bots.
"$PY" - "$PG" "$schema" <<'PYTHON'
import sys

import sqlalchemy as sa

engine = sa.create_engine(sys.argv[1])
with engine.begin() as conn:
    conn.execute(sa.text(f'CREATE SCHEMA "{sys.argv[2]}"'))
engine.dispose()
PYTHON
cp tests/integration/bots/slow_random.py "$bots/slow.py"
chmod -R a+rX "$bots"
# One-off commands from the platform image, as an operator runs them.
saloon_run() {
  docker run --rm --network host -v "$bots:/bots:ro" "$platform" saloon "$@"
}
saloon_run season create "$season" --game seas-of-strife-v1 --seats 3 --sandbox docker \
  --bot /bots/slow.py --bot house:random --bot house:greedy --bot house:random#2 \
  --rounds 1 --seed 5 --start-ms 30000 --store "$store"
saloon_run season start "$season" --store "$store" --redis "$REDIS" --queue "$queue" --batch 1

# 3. Two workers, each with its own host name, the engine through its socket.
for name in a b; do
  id="$(docker run -d --network host --hostname "$run-worker-$name" \
    --label "saloon.rehearsal=$run" \
    -v /var/run/docker.sock:/var/run/docker.sock \
    -v /var/lib/docker/volumes:/var/lib/docker/volumes:rslave \
    -v "$bots:/bots:ro" \
    -e SALOON_PACKAGE_CACHE=/var/cache/saloon \
    "$platform" saloon worker --redis "$REDIS" --queue "$queue" --max-jobs 500 --store "$store")"
  workers+=("$id")
  say "worker $name: container ${id:0:12}, host name $run-worker-$name"
done

# 4. Kill worker a (docker kill: SIGKILL) while one of its bot containers plays a match.
victim="${workers[0]}"
deadline=$((SECONDS + 120))
until [ -n "$(docker ps -q --filter "label=saloon.parent=$victim")" ]; do
  [ $SECONDS -lt $deadline ] || { say "worker a never started a match"; docker logs "$victim" | tail -20 >&2; exit 1; }
  sleep 0.2
done
sleep 0.5  # inside its match now
orphans="$(docker ps -q --filter "label=saloon.parent=$victim" | tr '\n' ' ')"
docker kill "$victim" >/dev/null
say "killed worker a mid-match; its bot containers: $orphans"

# 5. The survivor plays the rest (the killed match is reaped and retried) and sweeps.
"$PY" - "$store" "$season" "$victim" "$REDIS" "$queue" <<'PYTHON'
import sys
import time

import docker

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import progress
from saloon.worker.store.store import Store

store_url, season, victim, redis_url, queue_name = sys.argv[1:]
queue = SeasonQueue(connect(redis_url), queue_name)
with Store.open(store_url) as store:
    deadline = time.monotonic() + 240
    while not (p := progress(store, season, queue)).finished:
        if time.monotonic() > deadline:
            sys.exit(f"rehearse: FAIL: the season did not finish: {p}")
        time.sleep(1)
    scheduled = store.scheduled(season)
    results = store.results(season_id=season)
    ids = [r.match_id for r in results]
    if ids != [m.match_id for m in scheduled] or len(set(ids)) != len(ids) or p.done != len(ids):
        sys.exit(f"rehearse: FAIL: {len(ids)} results for {len(scheduled)} matches: {p}")
    again = [m.match_id for m in scheduled if m.attempts > 1]
    print(f"rehearse: {p.done} of {p.total} matches recorded once; played again: {again}")
    if not again:
        sys.exit("rehearse: FAIL: no match was played again after the kill")
client = docker.from_env()
deadline = time.monotonic() + 60
while left := client.containers.list(all=True, filters={"label": f"saloon.parent={victim}"}):
    if time.monotonic() > deadline:
        sys.exit(f"rehearse: FAIL: the dead worker's bot containers stayed: {left}")
    time.sleep(1)
print("rehearse: the dead worker's bot containers were swept")
PYTHON
say "PASS"
