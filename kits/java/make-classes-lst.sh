#!/usr/bin/env bash
# Make kits/java/classes.lst anew: the classes the Java runtime loads while it serves a match
# (the JVM's -XX:DumpLoadedClassList), which the image's class-data sharing archive holds.
# Each game's starter bot (saloon new GAME --lang java) is built in the runtime image, served
# there (no network, the bot's uid) and played by `saloon check-bot --game GAME`; the lists
# of the three runs are joined, in order, the bots' own classes left out. Rebuild the image
# after (its tag is a hash of the kit's files: the list is one).
# Needs an engine, the runtime image, the project's .venv.
#   bash kits/java/make-classes-lst.sh [TAG]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="$root/.venv/bin/python"
tag="${1:-$("$py" -m saloon.worker.sandbox.runtimes --tag java)}"
work="$(mktemp -d)"
container=""
cleanup() {
  if [ -n "$container" ]; then
    docker rm -f "$container" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
for game in seas-of-strife-v1 seizure-v1 western-showdown-v1; do
  bot="$work/$game"
  "$root/.venv/bin/saloon" new "$game" "$bot" --lang java >/dev/null
  mkdir -p "$bot/out" "$work/run-$game"
  chmod 777 "$bot/out" "$work/run-$game"
  docker run --rm --network none -v "$bot:/bot:ro" -v "$bot/out:/out" -w /bot "$tag" \
    sh /opt/saloon/java/build.sh /out Bot.java
  # The JVM's options are jvm.args' less the archive (a list is made without one).
  container=$(docker run -d --network none -v "$bot/out:/out:ro" -v "$work/run-$game:/run/s" \
    "$tag" java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xshare:auto \
    -XX:DumpLoadedClassList=/run/s/classes.lst -cp /opt/saloon/java/saloon.jar:/out/bot.jar \
    saloon.Main --jar /out/bot.jar --socket /run/s/bot.sock)
  for _ in $(seq 100); do
    [ -S "$work/run-$game/bot.sock" ] && break
    sleep 0.1
  done
  "$root/.venv/bin/saloon" check-bot "grpc:unix:$work/run-$game/bot.sock" --game "$game" \
    --matches 2
  docker stop -t 5 "$container" >/dev/null
  docker rm "$container" >/dev/null
  container=""
done
# The classes of the JDK, Gson and the runtime (saloon/), each once, in the order first
# loaded; the bots' own classes (and lambdas of theirs) are left out.
cat "$work"/run-*/classes.lst | awk '
  /^#/ { next }
  { name = ($1 ~ /^@lambda-proxy$/) ? $2 : ($1 ~ /^@/ ? "" : $1) }
  name != "" && name !~ /^(java|javax|jdk|sun|com\/sun|com\/google\/gson|saloon)\// { next }
  !seen[$0]++' >"$here/classes.lst"
echo "$(wc -l <"$here/classes.lst") lines in $here/classes.lst"
