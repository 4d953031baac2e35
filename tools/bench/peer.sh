#!/usr/bin/env bash
# Training throughput of one model: drun vs its PyTorch peer, plus OpenBLAS SGEMM peak.
#
#   tools/bench/peer.sh MODEL [--threads "1 2"] [--repeats N] [--steps N] [--warmup N]
#
# MODEL is seed_cnn or resnet20 (tools/bench/seed_cnn.sh and
# tools/bench/resnet20.sh call this; their headers describe the models and
# the work per image). Defaults: seed_cnn --repeats 5 --steps 300 --warmup 20,
# resnet20 --repeats 3 --steps 30 --warmup 3; --threads "1 2" for both.
#
# For each thread count, runs drun and PyTorch alternately `repeats` times
# (order flipped every repeat so machine noise hits both), takes the median
# images/s of each, runs sgemm_peak at that thread count and prints a markdown
# table, also written to build/bench/MODEL.md (raw JSON lines go to
# build/bench/MODEL.jsonl).
#
# drun:    $DRUN (default build/drun) --threads N tools/bench/MODEL_bench.lua [model args] --steps S --warmup W
# PyTorch: /usr/bin/python3 tools/bench/MODEL_torch.py, in its best configuration
#          (OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=1 GLIBC_TUNABLES=... see docs/benchmarks.md),
#          in both float32 layouts (--variants fp32,channels_last), the faster counting.
# SGEMM:   $SGEMM_PEAK, else build/tools/bench/sgemm_peak, else compiled with g++
#          into build/bench/sgemm_peak. Square N=2048, median of repeats.
# Fraction of SGEMM peak = drun images/s * FLOP per image / (SGEMM GFLOP/s * 1e9).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# As in cpu.sh: an OPENBLAS_CORETYPE the machine sets for every process is
# not passed on (drun, sgemm_peak and Debian's PyTorch pick their own
# OpenBLAS kernels); the report says so.
INHERITED_CORETYPE="${OPENBLAS_CORETYPE:-}"
unset OPENBLAS_CORETYPE DRUN_BLAS_CORE_CHOSEN

OUTDIR="build/bench"
MODEL="${1:-}"
[[ $# -gt 0 ]] && shift

# Per model: the drun script and its extra arguments, the PyTorch script, the
# work per image (FLOP, and as the report writes it), the default repeats,
# steps and warmup, the report's description, and the input data to prepare.
prepare_data() { :; }
case "$MODEL" in
  seed_cnn)
    DRUN_SCRIPT="tools/bench/seed_cnn_bench.lua"
    DRUN_ARGS=()
    TORCH_SCRIPT="tools/bench/seed_cnn_torch.py"
    FLOP_PER_IMAGE=2.86e6
    FLOP_TEXT="2.86 MFLOP"
    REPEATS=5
    STEPS=300
    WARMUP=20
    DESCRIPTION="Seed CNN, batch 64"
    ;;
  resnet20)
    MAKE_DATA="tests/data/make_cifar10.py"
    DATA_DIR="$OUTDIR/cifar10-noise"
    DATA_IMAGES=2560
    DRUN_SCRIPT="tools/bench/resnet20_bench.lua"
    DRUN_ARGS=(--dir "$DATA_DIR")
    TORCH_SCRIPT="tools/bench/resnet20_torch.py"
    FLOP_PER_IMAGE=2.44e8
    FLOP_TEXT="244 MFLOP"
    REPEATS=3
    STEPS=30
    WARMUP=3
    DESCRIPTION="ResNet-20 (option B), batch 128, SGD momentum 0.9 wd 2e-4, random 32×32×3 images"
    # The drun side reads its random images from a CIFAR-10 binary directory.
    prepare_data() {
      if [[ ! -f "$DATA_DIR/data_batch_5.bin" || "$MAKE_DATA" -nt "$DATA_DIR/data_batch_5.bin" ]]; then
        "$PYTHON" "$MAKE_DATA" "$DATA_DIR" --train "$DATA_IMAGES" --test 0 >&2
      fi
    }
    ;;
  *)
    [[ -z "$MODEL" ]] || echo "unknown model: $MODEL" >&2
    echo "usage: tools/bench/peer.sh seed_cnn|resnet20 [--threads \"1 2\"] [--repeats N] [--steps N] [--warmup N]" >&2
    exit 2 ;;
esac

THREADS="1 2"
USAGE="usage: tools/bench/$MODEL.sh [--threads \"1 2\"] [--repeats $REPEATS] [--steps $STEPS] [--warmup $WARMUP]"
usage() {
  echo "$USAGE" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) [[ $# -ge 2 ]] || usage; THREADS="$2"; shift 2 ;;
    --repeats) [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --steps)   [[ $# -ge 2 ]] || usage; STEPS="$2"; shift 2 ;;
    --warmup)  [[ $# -ge 2 ]] || usage; WARMUP="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for v in $THREADS "$REPEATS" "$STEPS" "$WARMUP"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "not a non-negative integer: $v" >&2; exit 2; }
done

DRUN="${DRUN:-build/drun}"
PYTHON="${PYTHON:-/usr/bin/python3}"
GLIBC_BEST="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"

if [[ ! -x "$DRUN" ]]; then
  echo "error: $DRUN does not exist or is not executable; build drun first (meson setup build && ninja -C build)" >&2
  exit 1
fi
[[ -f "$DRUN_SCRIPT" ]] || { echo "error: $DRUN_SCRIPT not found" >&2; exit 1; }
[[ -x "$PYTHON" ]] || { echo "error: $PYTHON not found" >&2; exit 1; }
# The peer: Debian's PyTorch (PyPI's wheel drags in gigabytes of GPU libraries).
if ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  echo "installing the peer: python3-torch python3-numpy" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-torch python3-numpy >&2
fi
mkdir -p "$OUTDIR"
prepare_data

SGEMM="${SGEMM_PEAK:-}"
if [[ -z "$SGEMM" ]]; then
  if [[ -x build/tools/bench/sgemm_peak ]]; then
    SGEMM=build/tools/bench/sgemm_peak
  else
    SGEMM="$OUTDIR/sgemm_peak"
    if [[ ! -x "$SGEMM" || tools/bench/sgemm_peak.cpp -nt "$SGEMM" ]]; then
      echo "# compiling $SGEMM with g++" >&2
      g++ -O2 tools/bench/sgemm_peak.cpp -lopenblas -o "$SGEMM"
    fi
  fi
fi

RAW="$OUTDIR/$MODEL.jsonl"
: > "$RAW"
ERRLOG="$(mktemp)"
trap 'rm -f "$ERRLOG"' EXIT

# Last JSON line of stdout -> value of "key" (number). Empty if absent.
json_num() {  # $1 = text, $2 = key
  printf '%s\n' "$1" | grep '^[[:space:]]*{' | tail -n 1 |
    grep -oE "\"$2\"[[:space:]]*:[[:space:]]*-?[0-9][0-9.eE+-]*" | head -n 1 |
    sed -E 's/.*:[[:space:]]*//'
}

median() {  # numbers as arguments
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR == 0) { print "nan"; exit }
    if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'
}

run_one() {  # $1 = drun|pytorch, $2 = threads; prints images/s
  local which="$1" t="$2" out ips
  if [[ "$which" == drun ]]; then
    if ! out="$("$DRUN" --device cpu --threads "$t" "$DRUN_SCRIPT" "${DRUN_ARGS[@]}" --steps "$STEPS" --warmup "$WARMUP" 2>"$ERRLOG")"; then
      echo "error: drun failed (threads $t):" >&2; tail -n 20 "$ERRLOG" >&2; return 1
    fi
  else
    if ! out="$(env OMP_NUM_THREADS="$t" OPENBLAS_NUM_THREADS=1 GLIBC_TUNABLES="$GLIBC_BEST" \
                "$PYTHON" "$TORCH_SCRIPT" --threads "$t" --steps "$STEPS" --warmup "$WARMUP" \
                --variants fp32,channels_last 2>"$ERRLOG")"; then
      echo "error: PyTorch bench failed (threads $t):" >&2; tail -n 20 "$ERRLOG" >&2; return 1
    fi
    # One line per float32 layout (NCHW, channels_last), each on a fresh
    # model: the faster is PyTorch's best eager configuration.
    out="$(printf '%s\n' "$out" | grep '^[[:space:]]*{' | awk '
      { if (match($0, /"images_per_sec":[0-9.eE+-]+/)) { v = substr($0, RSTART + 17, RLENGTH - 17) + 0
          if (v > best) { best = v; line = $0 } } }
      END { if (line != "") print line }')"
  fi
  ips="$(json_num "$out" images_per_sec)"
  if [[ -z "$ips" ]]; then
    echo "error: no \"images_per_sec\" in the last JSON line of $which's output (threads $t):" >&2
    printf '%s\n' "$out" | tail -n 5 >&2
    return 1
  fi
  printf '{"run":"%s","threads":%s,"images_per_sec":%s}\n' "$which" "$t" "$ips" >> "$RAW"
  echo "# $which threads=$t images/s=$ips" >&2
  echo "$ips"
}

TABLE="| threads | drun img/s (median) | PyTorch img/s (median) | ratio | drun fraction of SGEMM peak |
| --- | --- | --- | --- | --- |"
NOTES=""
for t in $THREADS; do
  drun_v=(); torch_v=()
  for ((r = 0; r < REPEATS; r++)); do
    if (( r % 2 == 0 )); then order="drun pytorch"; else order="pytorch drun"; fi
    for w in $order; do
      v="$(run_one "$w" "$t")" || exit 1
      if [[ "$w" == drun ]]; then drun_v+=("$v"); else torch_v+=("$v"); fi
    done
  done
  dm="$(median "${drun_v[@]}")"
  tm="$(median "${torch_v[@]}")"
  sg_out="$("$SGEMM" --threads "$t" --n 2048)" || { echo "error: $SGEMM failed" >&2; exit 1; }
  printf '%s\n' "$sg_out" >> "$RAW"
  gf="$(json_num "$sg_out" gflops)"
  [[ -n "$gf" ]] || { echo "error: no gflops from $SGEMM" >&2; exit 1; }
  echo "# sgemm_peak threads=$t n=2048 gflops=$gf" >&2
  row="$(awk -v t="$t" -v d="$dm" -v p="$tm" -v g="$gf" -v f="$FLOP_PER_IMAGE" 'BEGIN {
    printf "| %d | %.0f | %.0f | %.2f | %.3f |", t, d, p, (p > 0 ? d / p : 0), (g > 0 ? d * f / (g * 1e9) : 0) }')"
  TABLE+=$'\n'"$row"
  NOTES+=$'\n'"- threads $t: SGEMM N=2048 $gf GFLOP/s; drun runs: ${drun_v[*]}; PyTorch runs: ${torch_v[*]}"
done

REPORT="$TABLE

$DESCRIPTION, $STEPS timed steps after $WARMUP warmup, $REPEATS interleaved repeats per framework; $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores. Fraction of peak = drun img/s × $FLOP_TEXT / SGEMM FLOP/s.${INHERITED_CORETYPE:+ OPENBLAS_CORETYPE=$INHERITED_CORETYPE from the environment not passed on.}$NOTES"
printf '%s\n' "$REPORT"
printf '%s\n' "$REPORT" > "$OUTDIR/$MODEL.md"
echo "# wrote $OUTDIR/$MODEL.md and $RAW" >&2
