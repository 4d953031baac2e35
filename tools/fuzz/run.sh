#!/usr/bin/env bash
# tools/fuzz/run.sh TARGET SECONDS [libFuzzer options...]
# Builds the ASan+UBSan+libFuzzer build (build-asan: clang, -Dfuzz=true) when
# needed, then runs tools/fuzz/TARGET.cpp for SECONDS on its seed corpus
# (tools/fuzz/corpus/TARGET, read-only: new inputs go to build-asan/fuzz-corpus/TARGET).
# A crash, leak, hang (> 10 s an input) or sanitizer report stops it non-zero
# and leaves the input as build-asan/fuzz-artifacts/TARGET/crash-*.
# TARGET "all" runs every target for SECONDS each. docs/testing.md says more.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ $# -ge 2 ] || { echo "usage: tools/fuzz/run.sh TARGET|all SECONDS [libFuzzer options]" >&2; exit 2; }
target=$1 seconds=$2
shift 2
build=${DRUN_FUZZ_BUILD:-build-asan}
targets=$(sed -n "s/^  '\(fuzz_[a-z0-9_]*\)'.*/\1/p" tools/fuzz/meson.build)
if [ "$target" = all ]; then
  for t in $targets; do "$0" "$t" "$seconds" "$@" || exit $?; done
  exit 0
fi
case " $(echo $targets) " in
  *" $target "*) ;;
  *) echo "tools/fuzz/run.sh: unknown target '$target' (one of: $(echo $targets))" >&2; exit 2 ;;
esac
tools/fuzz/setup-build "$build"
ninja -C "$build" "tools/fuzz/$target" >/dev/null
mkdir -p "$build/fuzz-corpus/$target" "$build/fuzz-artifacts/$target"
# Open MPI and LuaJIT are not ours: leaks in MPI_Init's libraries are
# suppressed by name (tools/fuzz/lsan.supp); anything else stops the run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tools/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# A target may have a dictionary of its input's words (tools/fuzz/TARGET.dict,
# or h5_layout.dict for the targets that read tools/fuzz/h5_layout.hpp's descriptions).
dict=()
case $target in
  *_layout) dict=(-dict=tools/fuzz/h5_layout.dict) ;;
  *) [ -f "tools/fuzz/$target.dict" ] && dict=(-dict="tools/fuzz/$target.dict") ;;
esac
exec "$build/tools/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$target/" "${dict[@]}" "$@" \
  "$build/fuzz-corpus/$target" "tools/fuzz/corpus/$target"
