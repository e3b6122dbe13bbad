#!/bin/sh
# The Go build step: build the bot package in the current folder (/bot, read-only) into
# OUT/bot, offline, in GOPATH mode. The bot's package main has Act; this adds its main (a
# file overlaid beside the sources, so the compiler's messages name the author's own files)
# and starts from the image's build cache, where the runtime library, gRPC and protobuf are
# already compiled: only the bot's own code is compiled here.
#   sh /opt/saloon/go/build.sh OUT [FOLDER]   (FOLDER: the bot's entry's, default .)
set -eu
out="$1"
cd "${2:-.}"
cache="${GOCACHE:-/tmp/gocache}"
if [ ! -d "$cache" ]; then
  cp -r /opt/saloon/go/cache "$cache"
fi
main="${TMPDIR:-/tmp}/saloon-main.go"
overlay="${TMPDIR:-/tmp}/saloon-overlay.json"
printf 'package main\n\nimport "saloon"\n\nfunc main() { saloon.Main(Act) }\n' >"$main"
printf '{"Replace": {"%s/zz_saloon_main.go": "%s"}}' "$PWD" "$main" >"$overlay"
# The compiler names a file of the package ./bot.go: its messages are given as bot.go:L:C.
msgs="${TMPDIR:-/tmp}/saloon-build.txt"
status=0
env GOCACHE="$cache" go build -overlay "$overlay" -ldflags "-s -w" -o "$out/bot" . 2>"$msgs" || status=$?
sed -e 's|^\./||' -e '/^# _\//d' "$msgs" >&2
exit "$status"
