#!/usr/bin/env bash
# A debug build is not optimised: configures -Dbuildtype=debug in a temporary
# directory and checks every compile command Ninja would run (g++ and nvcc)
# for -O0 and against any -O1/-O2/-O3/-Os/-Ofast. Nothing is compiled.
# Usage: debug_build_test.sh SOURCE_ROOT
set -euo pipefail
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
meson setup "$dir/build" "$root" --buildtype=debug >"$dir/setup.log" 2>&1 || {
  cat "$dir/setup.log"
  exit 1
}
# Compile rules and per-object flags: ninja's ARGS lines and custom commands.
compile=$(grep -E '^ *(ARGS|COMMAND) = ' "$dir/build/build.ninja" | grep -E -- '-c |ARGS = ' || true)
commands=$(printf '%s\n' "$compile" | grep -c . || true)
optimised=$(printf '%s\n' "$compile" | grep -E -- '(^| )-O([1-3]|s|fast)( |$)' || true)
unoptimised=$(printf '%s\n' "$compile" | grep -cE -- '(^| )-O0( |$)' || true)
echo "debug build: $commands compile commands, $unoptimised with -O0"
if [ -n "$optimised" ]; then
  echo "optimisation flags in a debug build:"
  printf '%s\n' "$optimised" | head -5
  exit 1
fi
[ "$commands" -gt 0 ] && [ "$unoptimised" -eq "$commands" ] || {
  echo "not every compile command has -O0"
  exit 1
}
