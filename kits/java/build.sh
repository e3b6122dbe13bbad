#!/bin/sh
# The Java build step: compile the bot's sources (every .java file in the entry's folder and
# below; the sources are read-only) against the runtime library into OUT/bot.jar, offline.
# The jar's manifest names the entry's class (Main-Class), which the runtime serves. The
# runtime library, gRPC, protobuf and Gson are precompiled jars of the image: only the bot's
# own files are compiled here. javac is handed the files' paths relative to the package's
# top, so its messages name the author's own files (Bot.java:6: error: ...).
#   sh /opt/saloon/java/build.sh OUT ENTRY   (run in the package's top; ENTRY: Bot.java)
set -eu
out="$1"
entry="$2"
scratch="${TMPDIR:-/tmp}/saloon-build"
mkdir -p "$scratch/classes"
find "$(dirname "$entry")" -type f -name '*.java' | sed 's|^\./||' | sort >"$scratch/sources"
package=$(sed -n 's/^[[:space:]]*package[[:space:]]\{1,\}\([A-Za-z0-9_.]\{1,\}\)[[:space:]]*;.*/\1/p' \
  "$entry" | head -n 1)
main=$(basename "$entry" .java)
if [ -n "$package" ]; then
  main="$package.$main"
fi
# The compiler runs as the bot runs: one CPU, a small JIT, the serial collector.
javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -J-XX:-UsePerfData -J-Xshare:auto \
  -encoding UTF-8 -Xmaxerrs 20 -cp /opt/saloon/java/saloon.jar -d "$scratch/classes" \
  @"$scratch/sources"
jar --create --file "$out/bot.jar" --main-class "$main" -C "$scratch/classes" .
