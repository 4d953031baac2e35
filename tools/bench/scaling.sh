#!/usr/bin/env bash
# Data-parallel scaling of the seed CNN: images/s of 2 workers x 1 thread
# (drun -np 2, AllReduce, the default strategy with several workers) vs
# 1 worker x 1 thread, same script, same per-worker batch.
#
#   tools/bench/scaling.sh [--repeats 5] [--steps 300] [--warmup 20] [--np 2] [--independent]
#
#   1 worker:  build/drun --threads 1 tools/bench/seed_cnn_bench.lua --steps S --warmup W
#   N workers: build/drun -np N --threads 1 tools/bench/seed_cnn_bench.lua --steps S --warmup W
#              (AllReduce summing in node-shared memory, the default on one node),
#              and the same with --shared-memory=false (MPI_Iallreduce), in the same run
#
# With N workers the chief prints images/s summed over workers (Trainer::fit:
# the chief's images x workers / the chief's training seconds). With
# --independent a third row: N separate 1-worker processes started at once (no
# MPI, no exchange), their images/s summed: what this machine gives N
# concurrent trainings, the ceiling for N workers. Open MPI settings can be
# given through the environment (OMPI_MCA_<param>=value). Runs are
# interleaved (order flipped every repeat); the table gives medians. Raw JSON
# lines go to build/bench/scaling.jsonl, the table to build/bench/scaling.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

REPEATS=5
STEPS=300
WARMUP=20
NP=2
INDEPENDENT=0
usage() {
  echo "usage: $0 [--repeats 5] [--steps 300] [--warmup 20] [--np 2] [--independent]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeats) [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --steps)   [[ $# -ge 2 ]] || usage; STEPS="$2"; shift 2 ;;
    --warmup)  [[ $# -ge 2 ]] || usage; WARMUP="$2"; shift 2 ;;
    --np)      [[ $# -ge 2 ]] || usage; NP="$2"; shift 2 ;;
    --independent) INDEPENDENT=1; shift ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for v in "$REPEATS" "$STEPS" "$WARMUP" "$NP"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "not a non-negative integer: $v" >&2; exit 2; }
done

DRUN="${DRUN:-build/drun}"
SCRIPT="tools/bench/seed_cnn_bench.lua"
OUTDIR="build/bench"
[[ -x "$DRUN" ]] || { echo "error: $DRUN not built (ninja -C build)" >&2; exit 1; }
mkdir -p "$OUTDIR"
RAW="$OUTDIR/scaling.jsonl"
: > "$RAW"
ERRLOG="$(mktemp)"
trap 'rm -f "$ERRLOG"' EXIT

json_num() {  # $1 = text, $2 = key: the number in the last JSON line
  printf '%s\n' "$1" | grep '^[[:space:]]*{' | tail -n 1 |
    grep -oE "\"$2\"[[:space:]]*:[[:space:]]*-?[0-9][0-9.eE+-]*" | head -n 1 |
    sed -E 's/.*:[[:space:]]*//'
}
median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR == 0) { print "nan"; exit }
    if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'
}

run_one() {  # $1 = workers, $2 = exchange (shm or mpi); prints images/s
  local w="$1" exchange="${2:-shm}" out ips
  local cmd=("$DRUN" --device cpu)
  (( w > 1 )) && cmd+=(-np "$w")
  cmd+=(--threads 1 -q "$SCRIPT" --steps "$STEPS" --warmup "$WARMUP")
  [[ "$exchange" == mpi ]] && cmd+=(--shared-memory=false)
  if ! out="$("${cmd[@]}" 2>"$ERRLOG")"; then
    echo "error: ${cmd[*]} failed:" >&2; tail -n 20 "$ERRLOG" >&2; return 1
  fi
  ips="$(json_num "$out" images_per_sec)"
  [[ -n "$ips" ]] || { echo "error: no images_per_sec from ${cmd[*]}:" >&2; printf '%s\n' "$out" | tail -n 5 >&2; return 1; }
  printf '{"workers":%s,"threads":1,"exchange":"%s","images_per_sec":%s}\n' "$w" "$exchange" "$ips" >> "$RAW"
  echo "# workers=$w exchange=$exchange images/s=$ips" >&2
  echo "$ips"
}

run_independent() {  # N 1-worker processes at once; prints the sum of their images/s
  local pids=() files=() i f ips sum=0
  for ((i = 0; i < NP; i++)); do
    f="$(mktemp)"; files+=("$f")
    "$DRUN" --device cpu --threads 1 -q "$SCRIPT" --steps "$STEPS" --warmup "$WARMUP" > "$f" 2>>"$ERRLOG" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "error: an independent run failed:" >&2; tail -n 20 "$ERRLOG" >&2; return 1; }
  done
  for f in "${files[@]}"; do
    ips="$(json_num "$(cat "$f")" images_per_sec)"; rm -f "$f"
    [[ -n "$ips" ]] || { echo "error: no images_per_sec from an independent run" >&2; return 1; }
    sum="$(awk -v a="$sum" -v b="$ips" 'BEGIN { printf "%.1f", a + b }')"
  done
  printf '{"independent":%s,"threads":1,"images_per_sec":%s}\n' "$NP" "$sum" >> "$RAW"
  echo "# independent x$NP images/s=$sum" >&2
  echo "$sum"
}

one=(); many=(); viampi=(); indep=()
for ((r = 0; r < REPEATS; r++)); do
  if (( r % 2 == 0 )); then order="1 $NP m"; else order="m $NP 1"; fi
  (( INDEPENDENT )) && order+=" i"
  for w in $order; do
    if [[ "$w" == i ]]; then
      v="$(run_independent)" || exit 1; indep+=("$v"); continue
    fi
    if [[ "$w" == m ]]; then
      v="$(run_one "$NP" mpi)" || exit 1; viampi+=("$v"); continue
    fi
    v="$(run_one "$w")" || exit 1
    if [[ "$w" == 1 ]]; then one+=("$v"); else many+=("$v"); fi
  done
done
m1="$(median "${one[@]}")"
mn="$(median "${many[@]}")"
REPORT="| workers × threads | img/s (median) | runs |
| --- | --- | --- |
| 1 × 1 | $(printf '%.0f' "$m1") | ${one[*]} |
| $NP × 1, sums in node-shared memory (default) | $(printf '%.0f' "$mn") | ${many[*]} |
| $NP × 1, sums by MPI_Iallreduce (shared_memory = false) | $(printf '%.0f' "$(median "${viampi[@]}")") | ${viampi[*]} |$(
  (( INDEPENDENT )) && printf '\n| %s independent 1 × 1 processes at once (sum) | %.0f | %s |' "$NP" "$(median "${indep[@]}")" "${indep[*]}")

Speed-up $NP workers / 1 worker: $(awk -v a="$mn" -v b="$m1" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')× (through MPI_Iallreduce: $(awk -v a="$(median "${viampi[@]}")" -v b="$m1" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')×).$(
  (( INDEPENDENT )) && awk -v a="$(median "${indep[@]}")" -v b="$m1" -v m="$mn" 'BEGIN { printf " Independent processes / 1 worker: %.2f×; %d workers reach %.0f %% of that ceiling.", a / b, '"$NP"', 100 * m / a }') Seed CNN, batch 64 per worker, $STEPS timed steps after $WARMUP warm-up, $REPEATS interleaved repeats; $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores."
printf '%s\n' "$REPORT" | tee "$OUTDIR/scaling.md"
