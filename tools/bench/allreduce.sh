#!/usr/bin/env bash
# Gradient exchange: drun's AllReduce strategy vs one bare MPI_Allreduce on the
# same bytes, for the seed CNN's gradients and two 25M-parameter buffers.
#
#   tools/bench/allreduce.sh [--buckets "1 4 16"] [--repeats 3] [--np 2] [--iters 50] [--iters-big 20]
#
# Runs build/tools/bench/allreduce_bench under mpirun once per bucket size and
# repeat, bucket sizes rotated every repeat so machine noise hits all of them;
# inside one run the strategy and the bare call are interleaved per iteration,
# then the fresh-buffer call runs. Each run reports per-case medians over its
# iterations; the tables give the median over repeats. Raw JSON lines go to
# build/bench/allreduce.jsonl, the table to build/bench/allreduce.md.
#
#   mpirun --allow-run-as-root --oversubscribe --bind-to none -np N \
#     build/tools/bench/allreduce_bench --case all --bucket-mib B --iters I --iters-big J --fresh
#
# Extra mpirun arguments: MPIRUN_ARGS (e.g. "--mca coll_libnbc_iallreduce_algorithm 3").
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

BUCKETS="1 4 16"
REPEATS=3
NP=2
ITERS=50
ITERS_BIG=20
usage() {
  echo "usage: $0 [--buckets \"1 4 16\"] [--repeats 3] [--np 2] [--iters 50] [--iters-big 20]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --buckets)   [[ $# -ge 2 ]] || usage; BUCKETS="$2"; shift 2 ;;
    --repeats)   [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --np)        [[ $# -ge 2 ]] || usage; NP="$2"; shift 2 ;;
    --iters)     [[ $# -ge 2 ]] || usage; ITERS="$2"; shift 2 ;;
    --iters-big) [[ $# -ge 2 ]] || usage; ITERS_BIG="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for v in "$REPEATS" "$NP" "$ITERS" "$ITERS_BIG"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "not a non-negative integer: $v" >&2; exit 2; }
done
for b in $BUCKETS; do
  [[ "$b" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "not a bucket size in MiB: $b" >&2; exit 2; }
done

BENCH="${ALLREDUCE_BENCH:-build/tools/bench/allreduce_bench}"
MPIRUN="${MPIRUN:-mpirun}"
OUTDIR="build/bench"
[[ -x "$BENCH" ]] || { echo "error: $BENCH not built (ninja -C build tools/bench/allreduce_bench)" >&2; exit 1; }
command -v "$MPIRUN" >/dev/null || { echo "error: $MPIRUN not found (apt-get install openmpi-bin)" >&2; exit 1; }
mkdir -p "$OUTDIR"
RAW="$OUTDIR/allreduce.jsonl"
: > "$RAW"

read -r -a BLIST <<< "$BUCKETS"
for ((r = 0; r < REPEATS; r++)); do
  for ((k = 0; k < ${#BLIST[@]}; k++)); do
    b="${BLIST[$(( (k + r) % ${#BLIST[@]} ))]}"
    echo "# repeat $((r + 1))/$REPEATS bucket ${b} MiB" >&2
    # shellcheck disable=SC2086
    out="$("$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none -np "$NP" ${MPIRUN_ARGS:-} \
             "$BENCH" --case all --bucket-mib "$b" --iters "$ITERS" --iters-big "$ITERS_BIG" --fresh)" || {
      echo "error: allreduce_bench failed (bucket $b MiB)" >&2; exit 1; }
    printf '%s\n' "$out" | grep '^{' | sed "s/^{/{\"repeat\": $r, /" >> "$RAW"
  done
done

python3 - "$RAW" "$NP" "$REPEATS" "${MPIRUN_ARGS:-}" <<'PY' | tee "$OUTDIR/allreduce.md"
import json, statistics, sys, datetime, os
raw, np_, repeats, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = [json.loads(l) for l in open(raw) if l.strip()]
groups = {}
for r in rows:
    groups.setdefault((r["case"], r["bucket_mib"]), []).append(r)
med = lambda g, k: statistics.median(x[k] for x in g)
order = {"seed_cnn": 0, "uniform_25m": 1, "resnet50_mix": 2}
items = sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0][1]))
bus = 2 * (np_ - 1) / np_
print("| case | MiB | bucket MiB | buckets | bare ms | strategy ms | strategy / bare | fresh ms | fresh / bare | bare GB/s (busbw) | strategy GB/s (busbw) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for (case, b), g in items:
    by = g[0]["mib"] * (1 << 20)
    s, bare, fr = (med(g, k) for k in ("strategy_ms", "bare_ms", "fresh_ms"))
    bw = lambda ms: f"{by / (ms * 1e6):.2f} ({by / (ms * 1e6) * bus:.2f})" if ms > 0 else "-"
    print(f"| {case} | {g[0]['mib']:.1f} | {b:g} | {g[0]['buckets']} | {bare:.3f} | {s:.3f} | "
          f"{med(g, 'ratio_strategy_bare'):.2f} | {fr:.3f} | {med(g, 'ratio_fresh_bare'):.2f} | "
          f"{bw(bare)} | {bw(s)} |")
print()
print("Where the strategy's time goes (ms): gradients_ready (start the buckets' allreduces, "
      "the last one blocking, + progress) and finish_gradients (wait for the rest).")
print()
print("| case | bucket MiB | ready ms | finish ms |")
print("| --- | --- | --- | --- |")
for (case, b), g in items:
    print(f"| {case} | {b:g} | {med(g, 'ready_ms'):.3f} | {med(g, 'finish_ms'):.3f} |")
print()
print(f"{np_} ranks, {repeats} repeats per bucket size; each cell the median over repeats of "
      f"per-run medians (ratios: median of per-run ratios); mpirun extra arguments: "
      f"'{extra}'; {datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ} on {os.cpu_count()} cores.")
PY
echo "# wrote $OUTDIR/allreduce.md and $RAW" >&2
