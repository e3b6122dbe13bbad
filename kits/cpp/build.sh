#!/bin/sh
# The C++ build step: compile the bot's C++ files under the current folder (/bot, read-only)
# into OUT/bot, offline, and link the runtime library (libsaloon.a, precompiled in the image
# with the bot protocol's generated code: the program's main) and Debian's gRPC. Only the
# bot's own files are compiled here. The compiler runs in the sources' folder on relative
# paths, so its messages name the author's own files (bot.cpp:7:5: error: ...); -g1 keeps
# line tables, so an exception escaping act is reported at the bot's file:line.
#   sh /opt/saloon/cpp/build.sh OUT [FOLDER]   (FOLDER: the bot's entry's, default .)
set -eu
out="$1"
cd "${2:-.}"
home=/opt/saloon/cpp
list="${TMPDIR:-/tmp}/saloon-sources.txt"
find . -type f \( -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' \) | sed 's|^\./||' | sort >"$list"
set --
while IFS= read -r file; do
  set -- "$@" "$file"
done <"$list"
if [ "$#" -eq 0 ]; then
  echo "no C++ source file (.cpp, .cc or .cxx) in the bot's folder" >&2
  exit 1
fi
# saloon/saloon.hpp first, from its precompiled header (the same flags as the image's).
exec g++ -std=c++17 -O2 -g1 -pipe -I"$home/include" -include saloon/saloon.hpp -o "$out/bot" "$@" \
  -L"$home/lib" -lsaloon -lgrpc++ -lgrpc -lgpr -lprotobuf -labsl_synchronization -lbacktrace -pthread
