#!/usr/bin/env bash
# What drun --timeline costs: the seed CNN benchmark (tools/bench/seed_cnn_bench.lua)
# with the timeline off and on, in interleaved pairs (the order alternating, so
# that a machine's drift falls on both), medians of the step time compared.
#
#   tools/bench/timeline.sh [--repeats 7] [--steps 300] [--warmup 20] [--threads 1] [--np 1]
#
# --np 2 runs two workers under AllReduce (the exchange hooks too; buckets in
# node-shared memory). The step time is the fit's own (images/s), which the
# trace file's writing after the fit is not part of. Raw JSON lines go to
# build/bench/timeline.jsonl; the last line printed is the overhead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
drun=${DRUN:-$root/build/drun}
repeats=7 steps=300 warmup=20 threads=1 np=1
while [ $# -gt 0 ]; do
  case $1 in
    --repeats) repeats=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    *) echo "timeline.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
out=$root/build/bench
mkdir -p "$out"
raw=$out/timeline.jsonl
: > "$raw"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
launch=()
[ "$np" -gt 1 ] && launch=(-np "$np")

run() {  # run off|on: one benchmark, its JSON line tagged with the mode
  local flags=()
  [ "$1" = on ] && flags=(--timeline "$tmp/trace.json")
  local line
  line=$("$drun" -q "${launch[@]}" --threads "$threads" "${flags[@]}" \
         "$root/tools/bench/seed_cnn_bench.lua" --steps "$steps" --warmup "$warmup" | tail -1)
  echo "{\"timeline\": \"$1\", \"run\": $line}" >> "$raw"
  echo "  timeline $1: $line"
}

for ((i = 0; i < repeats; i++)); do
  if ((i % 2 == 0)); then run off; run on; else run on; run off; fi
done
events=$(python3 -c "import json; print(sum(e['ph'] == 'X' for e in json.load(open('$tmp/trace.json'))['traceEvents']))")
python3 - "$raw" "$events" "$steps" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = {m: statistics.median(r["run"]["step_ms"] for r in rows if r["timeline"] == m) for m in ("off", "on")}
print(f"step ms, median of {len(rows) // 2} each: off {med['off']:.3f}, on {med['on']:.3f}; "
      f"{int(sys.argv[2])} events in the last trace ({int(sys.argv[3])} timed steps)")
print(f"timeline overhead: {100 * (med['on'] / med['off'] - 1):+.2f} %")
PY
