#!/usr/bin/env bash
# Training step time on one GPU: drun (--device cuda) vs PyTorch on the same GPU, same run.
#
#   tools/bench/gpu.sh [--repeats 3] [--steps 200] [--warmup 20] [--run-timeout 120]
#
# Models (both full float32 training steps, SGD with momentum):
#   seed_cnn  the seed CNN (Conv2D 32 3x3 relu, MaxPool 2, Flatten, Dense 64
#             relu, Dense 10), SGD lr 0.01 momentum 0.9, batch 256, Fashion-MNIST
#             (Debian's dataset-fashion-mnist in /usr/share/datasets/fashion-mnist).
#   resnet20  ResNet-20, shortcut option B (models/resnet_cifar.lua), SGD lr 0.1
#             momentum 0.9 weight decay 2e-4, batch 128, random 32x32x3 images:
#             drun reads build/bench/cifar10-noise (2,560 images in the CIFAR-10
#             binary format, written once by tests/data/make_cifar10.py, as
#             tools/bench/resnet20.sh does); PyTorch draws its own random pool.
# drun:    $DRUN (default build/drun) --device cuda tools/bench/MODEL_bench.lua
#          --batch-size B --steps S --warmup W [--dir D]
# PyTorch: PY tools/bench/MODEL_torch.py --device cuda --batch B --steps S --warmup W,
#          where PY is $PYTHON, else the first of /usr/bin/python3,
#          /opt/torch/.venv/bin/python3 (the lent GPU machines' image) and
#          build/venv/bin/python whose torch sees a GPU. Its defaults: full
#          float32 (TF32 off, as drun's cuDNN/cuBLAS calls), cudnn.benchmark on,
#          data already on the GPU (drun's input pipeline runs on the host).
#          Without PyTorch+CUDA the drun numbers are still measured and
#          reported, with a line saying why PyTorch is missing.
#
# Each repeat runs, per model, drun and PyTorch one after the other, the order
# flipped every repeat so that drift hits both. Per model and framework: the
# median images/s over repeats and the median step time (ms, batch / images/s:
# the same definition for both); ratio = drun step time / PyTorch step time
# (> 1: drun slower). Also in the notes: PyTorch's median per-step time from
# CUDA events. The markdown table goes to stdout and build/bench/gpu.md, every
# run's JSON line, then one summary line per model, to build/bench/gpu.jsonl.
#
# A failed or timed-out run (--run-timeout seconds each) prints its error and
# the benchmark goes on; that framework/model pair is not retried in later
# repeats (it would most likely fail again, and device time is scarce). The
# exit status is non-zero if any run failed. Defaults: 12 runs of 220 steps,
# meant to stay well under 6 minutes on one H100/H200 (not yet timed on one;
# the report ends with the wall time).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

OUTDIR="build/bench"
REPEATS=3
STEPS=200
WARMUP=20
RUN_TIMEOUT=120
usage() {
  echo "usage: tools/bench/gpu.sh [--repeats $REPEATS] [--steps $STEPS] [--warmup $WARMUP] [--run-timeout $RUN_TIMEOUT]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeats)     [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --steps)       [[ $# -ge 2 ]] || usage; STEPS="$2"; shift 2 ;;
    --warmup)      [[ $# -ge 2 ]] || usage; WARMUP="$2"; shift 2 ;;
    --run-timeout) [[ $# -ge 2 ]] || usage; RUN_TIMEOUT="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for v in "$REPEATS" "$STEPS" "$WARMUP" "$RUN_TIMEOUT"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "not a non-negative integer: $v" >&2; exit 2; }
done
(( STEPS > 0 && REPEATS > 0 && RUN_TIMEOUT > 0 )) || { echo "--steps, --repeats and --run-timeout must be > 0" >&2; exit 2; }

DRUN="${DRUN:-build/drun}"
if [[ ! -x "$DRUN" ]]; then
  echo "error: $DRUN does not exist or is not executable; build drun first (meson setup build && ninja -C build)" >&2
  exit 1
fi
mkdir -p "$OUTDIR"

# --- The peer: a Python whose torch sees a GPU. No install attempt (unlike
# peer.sh): the GPU machine has no network, and Debian's python3-torch, the
# one peer.sh installs, is built without CUDA.
PROBE='
import sys
try:
    import torch
except Exception as e:
    print("no torch (%s: %s)" % (type(e).__name__, e)); sys.exit(3)
if not torch.cuda.is_available():
    print("torch %s, built for CUDA %s, sees no GPU" % (torch.__version__, torch.version.cuda)); sys.exit(3)
print("torch %s, CUDA %s, %s" % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0)))
'
TORCH_PY=""
TORCH_WHY=()
if [[ -n "${PYTHON:-}" ]]; then candidates=("$PYTHON"); else candidates=(/usr/bin/python3 /opt/torch/.venv/bin/python3 build/venv/bin/python); fi
for py in "${candidates[@]}"; do
  if [[ ! -x "$py" ]]; then TORCH_WHY+=("$py: not found"); continue; fi
  if msg="$(timeout 120 "$py" -c "$PROBE" 2>&1)"; then
    TORCH_PY="$py"
    echo "# PyTorch peer: $py ($(printf '%s\n' "$msg" | tail -n 1))" >&2
    break
  fi
  TORCH_WHY+=("$py: $(printf '%s\n' "$msg" | tail -n 1)")
done
TORCH_MISSING=""
if [[ -z "$TORCH_PY" ]]; then
  why="$(IFS=';'; echo "${TORCH_WHY[*]}")"
  TORCH_MISSING="PyTorch with CUDA: not available on this machine (${why//;/; }); drun's numbers only."
  echo "# $TORCH_MISSING" >&2
fi

# --- Data. The Fashion-MNIST files come from Debian (both frameworks read
# them); the ResNet-20 images are written here once, with the Python standard
# library only.
FASHION="${DRUN_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
[[ -f "$FASHION/train-images-idx3-ubyte.gz" ]] ||
  echo "warning: $FASHION/train-images-idx3-ubyte.gz missing (apt-get install dataset-fashion-mnist); the seed CNN runs will fail" >&2
MAKE_DATA="tests/data/make_cifar10.py"
CIFAR_DIR="$OUTDIR/cifar10-noise"
if [[ ! -f "$CIFAR_DIR/data_batch_5.bin" || "$MAKE_DATA" -nt "$CIFAR_DIR/data_batch_5.bin" ]]; then
  data_py="${TORCH_PY:-/usr/bin/python3}"
  [[ -x "$data_py" ]] || data_py=python3
  # Not fatal: the seed CNN and PyTorch's ResNet-20 still measure without it.
  "$data_py" "$MAKE_DATA" "$CIFAR_DIR" --train 2560 --test 0 >&2 ||
    echo "warning: $MAKE_DATA failed; drun's ResNet-20 runs will fail" >&2
fi

MODELS=(seed_cnn resnet20)
declare -A BATCH=([seed_cnn]=256 [resnet20]=128)
declare -A TITLE=([seed_cnn]="Seed CNN, Fashion-MNIST" [resnet20]="ResNet-20 (option B), random 32×32×3")
declare -A DRUN_EXTRA=([seed_cnn]="" [resnet20]="--dir $CIFAR_DIR")

RAW="$OUTDIR/gpu.jsonl"
: > "$RAW"
ERRLOG="$(mktemp)"
trap 'rm -f "$ERRLOG"' EXIT

# Last JSON line of stdout -> value of "key" (number). Empty if absent (not
# an error: grep finding nothing must not stop the script under pipefail).
json_num() {  # $1 = text, $2 = key
  { printf '%s\n' "$1" | grep '^[[:space:]]*{' | tail -n 1 |
      grep -oE "\"$2\"[[:space:]]*:[[:space:]]*-?[0-9][0-9.eE+-]*" | head -n 1 |
      sed -E 's/.*:[[:space:]]*//'; } || true
}
# Last JSON line of stdout -> value of "key" (string; \" and \\ undone, other
# escapes left as they are).
json_str() {  # $1 = text, $2 = key
  { printf '%s\n' "$1" | grep '^[[:space:]]*{' | tail -n 1 |
      grep -oE "\"$2\"[[:space:]]*:[[:space:]]*\"([^\"\\\\]|\\\\.)*\"" | head -n 1 |
      sed -E 's/^[^:]*:[[:space:]]*"//; s/"$//; s/\\(["\\])/\1/g'; } || true
}
# Text -> the inside of a JSON string literal.
json_escape() {  # $1 = text
  local t="${1//\\/\\\\}"
  printf '%s' "${t//\"/\\\"}"
}
median() {  # numbers as arguments
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR == 0) { print "nan"; exit }
    if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'
}

FAILED=0
declare -A DEAD=()       # "drun seed_cnn" -> why it is not run again
declare -A IPS=() STEP_MS=() EVENT_MS=()   # "drun seed_cnn" -> space-separated values
GPU_NAME="" TORCH_VERSION=""

run_one() {  # $1 = drun|pytorch, $2 = model, $3 = repeat; appends to IPS/STEP_MS
  local which="$1" model="$2" rep="$3" b="${BATCH[$2]}" out rc ips ms ev name
  local -a cmd
  if [[ "$which" == drun ]]; then
    # shellcheck disable=SC2206  # the extra arguments hold no spaces
    cmd=("$DRUN" --device cuda "tools/bench/${model}_bench.lua" ${DRUN_EXTRA[$model]}
         --batch-size "$b" --steps "$STEPS" --warmup "$WARMUP")
  else
    cmd=("$TORCH_PY" "tools/bench/${model}_torch.py" --device cuda
         --batch "$b" --steps "$STEPS" --warmup "$WARMUP")
  fi
  rc=0
  out="$(timeout "$RUN_TIMEOUT" "${cmd[@]}" 2>"$ERRLOG")" || rc=$?
  ips="$(json_num "$out" images_per_sec)"
  if (( rc != 0 )) || [[ -z "$ips" ]]; then
    FAILED=1
    if (( rc == 124 )); then DEAD["$which $model"]="timed out after ${RUN_TIMEOUT}s in repeat $rep"
    elif (( rc != 0 )); then DEAD["$which $model"]="exit status $rc in repeat $rep"
    else DEAD["$which $model"]="no images_per_sec in its output in repeat $rep"; fi
    echo "error: $which $model: ${DEAD["$which $model"]}: ${cmd[*]}" >&2
    echo "--- stderr (last 20 lines):" >&2; tail -n 20 "$ERRLOG" >&2
    echo "--- stdout (last 5 lines):" >&2; printf '%s\n' "$out" | tail -n 5 >&2
    printf '{"run":"%s","model":"%s","repeat":%d,"rc":%d}\n' "$which" "$model" "$rep" "$rc" >> "$RAW"
    return 0
  fi
  ms="$(awk -v b="$b" -v i="$ips" 'BEGIN { printf "%.4f", (i > 0 ? 1000 * b / i : 0) }')"
  IPS["$which $model"]+="$ips "
  STEP_MS["$which $model"]+="$ms "
  ev="$(json_num "$out" step_ms_median)"
  [[ -z "$ev" ]] || EVENT_MS["$which $model"]+="$ev "
  name="$(json_str "$out" gpu_name)"
  # drun's name for the GPU first: it is what drun says it ran on.
  if [[ -n "$name" && ( -z "$GPU_NAME" || "$which" == drun ) ]]; then GPU_NAME="$name"; fi
  [[ "$which" != pytorch ]] || TORCH_VERSION="torch $(json_str "$out" torch), CUDA $(json_str "$out" cuda), cuDNN $(json_num "$out" cudnn)"
  printf '{"run":"%s","model":"%s","repeat":%d,"rc":0,"result":%s}\n' "$which" "$model" "$rep" \
    "$(printf '%s\n' "$out" | grep '^[[:space:]]*{' | tail -n 1)" >> "$RAW"
  echo "# repeat $rep $which $model batch $b: $ips images/s, $ms ms/step" >&2
}

START=$(date +%s)
for ((r = 1; r <= REPEATS; r++)); do
  if (( r % 2 == 1 )); then order="drun pytorch"; else order="pytorch drun"; fi
  for model in "${MODELS[@]}"; do
    for w in $order; do
      [[ "$w" == pytorch && -z "$TORCH_PY" ]] && continue
      if [[ -n "${DEAD["$w $model"]:-}" ]]; then
        echo "# repeat $r $w $model: skipped (failed earlier: ${DEAD["$w $model"]})" >&2
        continue
      fi
      run_one "$w" "$model" "$r"
    done
  done
done
ELAPSED=$(( $(date +%s) - START ))

if [[ -z "$GPU_NAME" ]] && command -v nvidia-smi >/dev/null 2>&1; then
  GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1 || true)"
fi
DRIVER=""
if command -v nvidia-smi >/dev/null 2>&1; then
  DRIVER="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -n 1 || true)"
fi
REV="$(git describe --always --dirty 2>/dev/null || echo unknown)"
DATE="$(date -u +%Y-%m-%dT%H:%MZ)"

cell() {  # $1 = values or empty, $2 = printf format, $3 = why missing
  if [[ -z "$1" ]]; then echo "$3"; return; fi
  # shellcheck disable=SC2086
  awk -v m="$(median $1)" -v f="$2" 'BEGIN { printf f, m }'
}
TABLE="| model | batch | drun img/s | PyTorch img/s | drun ms/step | PyTorch ms/step | drun / PyTorch time |
| --- | --- | --- | --- | --- | --- | --- |"
NOTES=""
for model in "${MODELS[@]}"; do
  d="drun $model"; p="pytorch $model"
  if [[ -z "$TORCH_PY" ]]; then pmiss="n/a"; elif [[ -n "${DEAD[$p]:-}" && -z "${IPS[$p]:-}" ]]; then pmiss="failed"; else pmiss="n/a"; fi
  if [[ -n "${DEAD[$d]:-}" && -z "${IPS[$d]:-}" ]]; then dmiss="failed"; else dmiss="n/a"; fi
  dms="$(cell "${STEP_MS[$d]:-}" "%.3f" "$dmiss")"
  pms="$(cell "${STEP_MS[$p]:-}" "%.3f" "$pmiss")"
  ratio="n/a" ratio_json=null
  if [[ "$dms" =~ ^[0-9.]+$ && "$pms" =~ ^[0-9.]+$ ]]; then
    ratio_json="$(awk -v a="$dms" -v b="$pms" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "null" }')"
    [[ "$ratio_json" == null ]] || ratio="$(awk -v r="$ratio_json" 'BEGIN { printf "%.2f×", r }')"
  fi
  TABLE+=$'\n'"| ${TITLE[$model]} | ${BATCH[$model]} | $(cell "${IPS[$d]:-}" "%.0f" "$dmiss") | $(cell "${IPS[$p]:-}" "%.0f" "$pmiss") | $dms | $pms | $ratio |"
  # One summary line per model after the runs' lines; null where not measured.
  printf '{"summary":true,"model":"%s","batch":%d,"gpu_name":"%s","date":"%s","steps":%d,"warmup":%d,"repeats":%d,"drun_images_per_sec":%s,"pytorch_images_per_sec":%s,"drun_step_ms":%s,"pytorch_step_ms":%s,"time_ratio":%s}\n' \
    "$model" "${BATCH[$model]}" "$(json_escape "${GPU_NAME:-unknown}")" "$DATE" "$STEPS" "$WARMUP" "$REPEATS" \
    "$(cell "${IPS[$d]:-}" "%.1f" null)" "$(cell "${IPS[$p]:-}" "%.1f" null)" \
    "$(cell "${STEP_MS[$d]:-}" "%.4f" null)" "$(cell "${STEP_MS[$p]:-}" "%.4f" null)" \
    "$ratio_json" >> "$RAW"
  runs="${IPS[$d]:-none}"
  NOTES+=$'\n'"- $model: drun runs (img/s): ${runs% }"
  [[ -z "${DEAD[$d]:-}" ]] || NOTES+=" (drun failed: ${DEAD[$d]})"
  if [[ -n "$TORCH_PY" ]]; then
    runs="${IPS[$p]:-none}"
    NOTES+="; PyTorch runs (img/s): ${runs% }"
    [[ -z "${DEAD[$p]:-}" ]] || NOTES+=" (PyTorch failed: ${DEAD[$p]})"
    [[ -z "${EVENT_MS[$p]:-}" ]] || NOTES+="; PyTorch median per-step time (CUDA events), median over runs: $(cell "${EVENT_MS[$p]}" "%.3f" n/a) ms"
  fi
done

PEER_LINE="$TORCH_MISSING"
[[ -n "$PEER_LINE" ]] || PEER_LINE="PyTorch: $TORCH_VERSION ($TORCH_PY), full float32 (TF32 off), cudnn.benchmark on, data on the GPU."
REPORT="GPU: ${GPU_NAME:-unknown}${DRIVER:+ (driver $DRIVER)}, $DATE, $(nproc) CPU cores, drun $REV.

$TABLE

$STEPS timed steps after $WARMUP warm-up steps, $REPEATS interleaved repeats per framework, medians; ms/step = batch / images/s; ratio = drun ms/step / PyTorch ms/step (> 1: drun slower). drun: \`$DRUN --device cuda tools/bench/MODEL_bench.lua\`, cuDNN/cuBLAS in full float32, input pipeline on the host. $PEER_LINE Wall time ${ELAPSED}s.$NOTES"
printf '%s\n' "$REPORT"
printf '%s\n' "$REPORT" > "$OUTDIR/gpu.md"
echo "# wrote $OUTDIR/gpu.md and $RAW" >&2
if (( FAILED )); then
  echo "error: some runs failed (see above)" >&2
  exit 1
fi
