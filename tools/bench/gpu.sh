#!/usr/bin/env bash
# Training step time on one GPU: drun (--device cuda) vs PyTorch on the same GPU, same run.
#
#   tools/bench/gpu.sh [--repeats 3] [--steps 200] [--warmup 20] [--run-timeout 300]
#                      [--compile 0|1] [--torch-variants fp32,channels_last,amp_bf16,amp_fp16]
#                      [--drun-variants fp32,fp32_no_graphs,mixed_float16,mixed_bfloat16]
#                      [--models seed_cnn,resnet20,resnet56(,resnet56_b1024,lstm_lm,transformer_lm)]
#
# Models (SGD with momentum, but for the language models):
#   seed_cnn  the seed CNN (Conv2D 32 3x3 relu, MaxPool 2, Flatten, Dense 64
#             relu, Dense 10), SGD lr 0.01 momentum 0.9, batch 256, Fashion-MNIST
#             (Debian's dataset-fashion-mnist in /usr/share/datasets/fashion-mnist).
#   resnet20, resnet56  ResNet-20 / -56, shortcut option B (models/resnet_cifar.lua,
#             --n 3 / 9), SGD lr 0.1 momentum 0.9 weight decay 2e-4, batch 128,
#             random 32x32x3 images: drun reads build/bench/cifar10-noise (2,560
#             images in the CIFAR-10 binary format, written once by
#             tests/data/make_cifar10.py, as tools/bench/resnet20.sh does);
#             PyTorch draws its own random pool.
#   lstm_lm, transformer_lm  the character language models of tools/bench/char_lm_*
#             (models/lstm_lm.lua, models/transformer_lm.lua), Adam lr 1e-3,
#             batch 32 windows of 64 random tokens; "img/s" is sequences/s.
# drun:    $DRUN (default build/drun) --device cuda tools/bench/SCRIPT_bench.lua
#          --batch-size B --steps S --warmup W [--dir D --n N] [--precision P]: fp32
#          is full float32 with each step launched as a CUDA graph (drun's
#          default), fp32_no_graphs the same with --cuda-graphs=false (each
#          kernel launched by itself); mixed_float16 and mixed_bfloat16 are drun's mixed
#          precision (Keras' policies: the convolutions and GEMMs on the tensor
#          cores, a loss scale for float16), each variant a process of its own.
# PyTorch: PY tools/bench/SCRIPT_torch.py --device cuda --batch B --steps S --warmup W
#          --variants V, where PY is $PYTHON, else the first of /usr/bin/python3,
#          /opt/torch/.venv/bin/python3 (the lent GPU machines' image) and
#          build/venv/bin/python whose torch sees a GPU. Each variant trains a
#          fresh model in the same process (torch_timing.py): fp32 (NCHW) and
#          channels_last, float32 with TF32 off (as drun's cuDNN/cuBLAS calls);
#          amp_bf16 and amp_fp16 (torch.autocast, channels_last, a GradScaler
#          for fp16); then, once per model after the repeats (--compile 1),
#          torch.compile(mode="reduce-overhead"), which replays CUDA graphs.
#          cudnn.benchmark on, data already on the GPU (drun's input pipeline
#          runs on the host). Without PyTorch+CUDA the drun numbers are still
#          measured and reported, with a line saying why PyTorch is missing.
#
# Each repeat runs, per model, drun and PyTorch one after the other, the order
# flipped every repeat so that drift hits both. Per model and variant: the
# median step time (ms, batch / images/s: the same definition for both) over
# repeats; ratio = drun's fp32 step time / PyTorch's best eager fp32 (the
# faster of NCHW and channels_last; > 1: drun slower). Also in the notes:
# each variant's runs and its median per-step time from CUDA events. The
# markdown table goes to stdout and build/bench/gpu.md, every run's JSON
# line, then one summary line per model, to build/bench/gpu.jsonl.
#
# A failed or timed-out run (--run-timeout seconds each) prints its error and
# the benchmark goes on; that framework/model pair is not retried in later
# repeats (it would most likely fail again, and device time is scarce). The
# exit status is non-zero if any run failed; a variant that cannot run (say,
# torch.compile without a compiler) is reported in the notes, not a failure.
# The variants and ResNet-56 were added 2026-11-27 and are not yet timed on a
# GPU (checked on the CPU through wrappers that turn cuda into cpu).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

OUTDIR="build/bench"
REPEATS=3
STEPS=200
WARMUP=20
RUN_TIMEOUT=300
COMPILE=1
TORCH_VARIANTS=fp32,channels_last,amp_bf16,amp_fp16
DRUN_VARIANTS=fp32,fp32_no_graphs,mixed_float16,mixed_bfloat16
MODEL_LIST=seed_cnn,resnet20,resnet56
usage() {
  echo "usage: tools/bench/gpu.sh [--repeats $REPEATS] [--steps $STEPS] [--warmup $WARMUP] [--run-timeout $RUN_TIMEOUT] [--compile 0|1] [--torch-variants $TORCH_VARIANTS] [--drun-variants $DRUN_VARIANTS] [--models $MODEL_LIST(,resnet56_b1024)]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeats)     [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --steps)       [[ $# -ge 2 ]] || usage; STEPS="$2"; shift 2 ;;
    --warmup)      [[ $# -ge 2 ]] || usage; WARMUP="$2"; shift 2 ;;
    --run-timeout) [[ $# -ge 2 ]] || usage; RUN_TIMEOUT="$2"; shift 2 ;;
    --compile)     [[ $# -ge 2 && "$2" =~ ^[01]$ ]] || usage; COMPILE="$2"; shift 2 ;;
    --torch-variants) [[ $# -ge 2 ]] || usage; TORCH_VARIANTS="$2"; shift 2 ;;
    --drun-variants) [[ $# -ge 2 ]] || usage; DRUN_VARIANTS="$2"; shift 2 ;;
    --models)      [[ $# -ge 2 ]] || usage; MODEL_LIST="$2"; shift 2 ;;
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

read -r -a MODELS <<<"${MODEL_LIST//,/ }"
# resnet56_b1024: ResNet-56 at batch 1024, where arithmetic rather than
# launches bounds the step (where mixed precision should pay); not run by default.
declare -A BATCH=([seed_cnn]=256 [resnet20]=128 [resnet56]=128 [resnet56_b1024]=1024 [lstm_lm]=32 [transformer_lm]=32)
declare -A TITLE=([seed_cnn]="Seed CNN, Fashion-MNIST" [resnet20]="ResNet-20 (option B), random 32×32×3"
                  [resnet56]="ResNet-56 (option B), random 32×32×3"
                  [resnet56_b1024]="ResNet-56 (option B), random 32×32×3"
                  [lstm_lm]="LSTM character LM, 64 steps" [transformer_lm]="Transformer character LM, 64 steps")
declare -A DRUN_EXTRA=([seed_cnn]="" [resnet20]="--dir $CIFAR_DIR --n 3" [resnet56]="--dir $CIFAR_DIR --n 9"
                       [resnet56_b1024]="--dir $CIFAR_DIR --n 9" [lstm_lm]="--model lstm"
                       [transformer_lm]="--model transformer")
declare -A TORCH_EXTRA=([seed_cnn]="" [resnet20]="--n 3" [resnet56]="--n 9" [resnet56_b1024]="--n 9"
                        [lstm_lm]="--model lstm" [transformer_lm]="--model transformer")
declare -A SCRIPT=([seed_cnn]=seed_cnn [resnet20]=resnet20 [resnet56]=resnet20 [resnet56_b1024]=resnet20
                   [lstm_lm]=char_lm [transformer_lm]=char_lm)
for m in "${MODELS[@]}"; do
  [[ -n "${BATCH[$m]:-}" ]] || { echo "error: --models: unknown '$m' (known: $(printf '%s\n' "${!BATCH[@]}" | sort | paste -sd ' '))" >&2; exit 2; }
done

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
declare -A IPS=() STEP_MS=() EVENT_MS=()   # "drun seed_cnn", "pytorch:fp32 seed_cnn" -> space-separated values
declare -A WHY=()        # "pytorch:compile resnet20" -> why that variant gave no number
GPU_NAME="" TORCH_VERSION=""

# $1 = drun (float32), drun:POLICY (a mixed policy) or pytorch, $2 = model,
# $3 = repeat, $4 = PyTorch's variants; appends to IPS/STEP_MS under "$1 $2"
# (PyTorch: "pytorch:VARIANT $2").
run_one() {
  local which="$1" model="$2" rep="$3" b="${BATCH[$2]}" out rc ips ms ev name line variant key
  local -a cmd
  # shellcheck disable=SC2206  # the extra arguments hold no spaces
  if [[ "$which" == drun* ]]; then
    cmd=("$DRUN" --device cuda "tools/bench/${SCRIPT[$model]}_bench.lua" ${DRUN_EXTRA[$model]}
         --batch-size "$b" --steps "$STEPS" --warmup "$WARMUP")
    case "$which" in
      drun) ;;
      drun:no_graphs) cmd+=(--cuda-graphs=false) ;;
      *) cmd+=(--precision "${which#drun:}") ;;
    esac
  else
    cmd=("$TORCH_PY" "tools/bench/${SCRIPT[$model]}_torch.py" ${TORCH_EXTRA[$model]} --device cuda
         --batch "$b" --steps "$STEPS" --warmup "$WARMUP" --variants "$4")
  fi
  rc=0
  out="$(timeout "$RUN_TIMEOUT" "${cmd[@]}" 2>"$ERRLOG")" || rc=$?
  if (( rc != 0 )) || ! grep -qE '"(images_per_sec|error)"' <<<"$out"; then
    FAILED=1
    if (( rc == 124 )); then DEAD["$which $model"]="timed out after ${RUN_TIMEOUT}s in repeat $rep"
    elif (( rc != 0 )); then DEAD["$which $model"]="exit status $rc in repeat $rep"
    else DEAD["$which $model"]="no result in its output in repeat $rep"; fi
    echo "error: $which $model: ${DEAD["$which $model"]}: ${cmd[*]}" >&2
    echo "--- stderr (last 20 lines):" >&2; tail -n 20 "$ERRLOG" >&2
    echo "--- stdout (last 5 lines):" >&2; printf '%s\n' "$out" | tail -n 5 >&2
    printf '{"run":"%s","model":"%s","repeat":%d,"rc":%d}\n' "$which" "$model" "$rep" "$rc" >> "$RAW"
    return 0
  fi
  # One JSON line per PyTorch variant (torch_timing.py), one for drun; a
  # variant that could not run says why in "error".
  while read -r line; do
    variant="$(json_str "$line" variant)"
    key="$which"; [[ "$which" == drun* ]] || key="pytorch:$variant"
    printf '{"run":"%s","model":"%s","repeat":%d,"rc":0,"result":%s}\n' "$key" "$model" "$rep" "$line" >> "$RAW"
    ips="$(json_num "$line" images_per_sec)"
    if [[ -z "$ips" ]]; then
      WHY["$key $model"]="$(json_str "$line" error)"
      echo "# repeat $rep $key $model: ${WHY["$key $model"]:-no images_per_sec}" >&2
      continue
    fi
    ms="$(awk -v b="$b" -v i="$ips" 'BEGIN { printf "%.4f", (i > 0 ? 1000 * b / i : 0) }')"
    IPS["$key $model"]+="$ips "
    STEP_MS["$key $model"]+="$ms "
    ev="$(json_num "$line" step_ms_median)"
    [[ -z "$ev" ]] || EVENT_MS["$key $model"]+="$ev "
    name="$(json_str "$line" gpu_name)"
    # drun's name for the GPU first: it is what drun says it ran on.
    if [[ -n "$name" && ( -z "$GPU_NAME" || "$which" == drun* ) ]]; then GPU_NAME="$name"; fi
    [[ "$which" != pytorch ]] || TORCH_VERSION="torch $(json_str "$line" torch), CUDA $(json_str "$line" cuda), cuDNN $(json_num "$line" cudnn)"
    echo "# repeat $rep $key $model batch $b: $ips images/s, $ms ms/step" >&2
  done < <(printf '%s\n' "$out" | grep '^[[:space:]]*{')
}

DRUN_RUNS=""
for v in ${DRUN_VARIANTS//,/ }; do
  case $v in
    fp32) DRUN_RUNS+=" drun" ;;
    fp32_no_graphs) DRUN_RUNS+=" drun:no_graphs" ;;
    mixed_float16|mixed_bfloat16) DRUN_RUNS+=" drun:$v" ;;
    *) echo "error: --drun-variants: unknown '$v' (fp32, fp32_no_graphs, mixed_float16, mixed_bfloat16)" >&2; exit 2 ;;
  esac
done
START=$(date +%s)
# One untimed run of each framework first: on a freshly started machine the
# first process pays for loading the driver's and cuDNN's code (2026-11-27,
# an H100: drun's first seed-CNN run 201,818 img/s, its second 349,583).
m0="${MODELS[0]}"
timeout "$RUN_TIMEOUT" "$DRUN" --device cuda "tools/bench/${SCRIPT[$m0]}_bench.lua" ${DRUN_EXTRA[$m0]} \
  --batch-size "${BATCH[$m0]}" --steps 5 --warmup 5 > /dev/null 2>&1 || true
[[ -z "$TORCH_PY" ]] || timeout "$RUN_TIMEOUT" "$TORCH_PY" "tools/bench/${SCRIPT[$m0]}_torch.py" \
  ${TORCH_EXTRA[$m0]} --device cuda --batch "${BATCH[$m0]}" --steps 5 --warmup 5 > /dev/null 2>&1 || true
for ((r = 1; r <= REPEATS; r++)); do
  if (( r % 2 == 1 )); then order="$DRUN_RUNS pytorch"; else order="pytorch $DRUN_RUNS"; fi
  for model in "${MODELS[@]}"; do
    for w in $order; do
      [[ "$w" == pytorch && -z "$TORCH_PY" ]] && continue
      if [[ -n "${DEAD["$w $model"]:-}" ]]; then
        echo "# repeat $r $w $model: skipped (failed earlier: ${DEAD["$w $model"]})" >&2
        continue
      fi
      run_one "$w" "$model" "$r" "$TORCH_VARIANTS"
    done
  done
done
# torch.compile once per model, after the repeats: its compilation takes
# longer than the eager runs together.
if (( COMPILE )) && [[ -n "$TORCH_PY" ]]; then
  for model in "${MODELS[@]}"; do
    [[ -z "${DEAD["pytorch $model"]:-}" ]] || continue
    # A compile that fails or runs out of time is reported, not a failure of
    # the benchmark (not every machine has what Inductor needs).
    failed=$FAILED
    run_one pytorch "$model" 1 compile
    if [[ -n "${DEAD["pytorch $model"]:-}" ]]; then
      WHY["pytorch:compile $model"]="${DEAD["pytorch $model"]}"
      unset 'DEAD["pytorch $model"]'
      FAILED=$failed
    fi
  done
fi
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
# PyTorch's columns: each variant's median ms/step; "best eager fp32" is the
# faster of its two float32 layouts, the one drun's ratio is taken against.
VARIANT_COLS=(fp32 channels_last amp_bf16 amp_fp16 compile)
declare -A VARIANT_TITLE=([fp32]="PyTorch fp32 NCHW" [channels_last]="PyTorch fp32 channels_last"
  [amp_bf16]="PyTorch AMP bf16" [amp_fp16]="PyTorch AMP fp16" [compile]="PyTorch compile (reduce-overhead)")
TABLE="| model | batch | drun fp32 ms/step | drun img/s | drun fp32 without graphs ms/step | drun mixed_float16 ms/step | drun mixed_bfloat16 ms/step"
SEP="| --- | --- | --- | --- | --- | --- | ---"
for v in "${VARIANT_COLS[@]}"; do
  TABLE+=" | ${VARIANT_TITLE[$v]} ms/step"; SEP+=" | ---"
  [[ "$v" == channels_last ]] && { TABLE+=" | drun / PyTorch best eager fp32"; SEP+=" | ---"; }
done
TABLE+=" |"$'\n'"$SEP |"
NOTES=""
for model in "${MODELS[@]}"; do
  d="drun $model"
  if [[ -n "${DEAD[$d]:-}" && -z "${IPS[$d]:-}" ]]; then dmiss="failed"; else dmiss="n/a"; fi
  dms="$(cell "${STEP_MS[$d]:-}" "%.3f" "$dmiss")"
  row="| ${TITLE[$model]} | ${BATCH[$model]} | $dms | $(cell "${IPS[$d]:-}" "%.0f" "$dmiss")"
  json_cols=""
  for v in no_graphs mixed_float16 mixed_bfloat16; do
    k="drun:$v $model"
    miss="n/a"
    [[ -n "${DEAD[$k]:-}" && -z "${IPS[$k]:-}" ]] && miss="failed"
    row+=" | $(cell "${STEP_MS[$k]:-}" "%.3f" "$miss")"
    json_cols+=",\"drun_${v}_step_ms\":$(cell "${STEP_MS[$k]:-}" "%.4f" null)"
  done
  declare -A PMS=()
  for v in "${VARIANT_COLS[@]}"; do
    k="pytorch:$v $model"
    miss="n/a"
    [[ -n "${WHY[$k]:-}" ]] && miss="failed"
    [[ -n "${DEAD["pytorch $model"]:-}" && -z "${IPS[$k]:-}" ]] && miss="failed"
    PMS[$v]="$(cell "${STEP_MS[$k]:-}" "%.3f" "$miss")"
    row+=" | ${PMS[$v]}"
    json_cols+=",\"pytorch_${v}_step_ms\":$(cell "${STEP_MS[$k]:-}" "%.4f" null)"
    if [[ "$v" == channels_last ]]; then
      best="$(awk -v a="${PMS[fp32]}" -v b="${PMS[channels_last]}" 'BEGIN {
        if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) print (a < b ? a : b)
        else if (a ~ /^[0-9.]+$/) print a; else if (b ~ /^[0-9.]+$/) print b; else print "" }')"
      ratio="n/a" ratio_json=null
      if [[ "$dms" =~ ^[0-9.]+$ && -n "$best" ]]; then
        ratio_json="$(awk -v a="$dms" -v b="$best" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "null" }')"
        [[ "$ratio_json" == null ]] || ratio="$(awk -v r="$ratio_json" 'BEGIN { printf "%.2f×", r }')"
      fi
      row+=" | $ratio"
    fi
  done
  TABLE+=$'\n'"$row |"
  unset PMS
  # One summary line per model after the runs' lines; null where not measured.
  printf '{"summary":true,"model":"%s","batch":%d,"gpu_name":"%s","date":"%s","steps":%d,"warmup":%d,"repeats":%d,"drun_images_per_sec":%s,"drun_step_ms":%s%s,"time_ratio_best_eager_fp32":%s}\n' \
    "$model" "${BATCH[$model]}" "$(json_escape "${GPU_NAME:-unknown}")" "$DATE" "$STEPS" "$WARMUP" "$REPEATS" \
    "$(cell "${IPS[$d]:-}" "%.1f" null)" "$(cell "${STEP_MS[$d]:-}" "%.4f" null)" "$json_cols" \
    "$ratio_json" >> "$RAW"
  runs="${IPS[$d]:-none}"
  NOTES+=$'\n'"- $model: drun runs (img/s): ${runs% }"
  [[ -z "${DEAD[$d]:-}" ]] || NOTES+=" (drun failed: ${DEAD[$d]})"
  for v in no_graphs mixed_float16 mixed_bfloat16; do
    k="drun:$v $model"
    [[ -n "${IPS[$k]:-}${DEAD[$k]:-}" ]] || continue
    runs="${IPS[$k]:-none}"
    NOTES+="; drun $v (img/s): ${runs% }"
    [[ -z "${DEAD[$k]:-}" ]] || NOTES+=" (failed: ${DEAD[$k]})"
  done
  if [[ -n "$TORCH_PY" ]]; then
    [[ -z "${DEAD["pytorch $model"]:-}" ]] || NOTES+="; PyTorch failed: ${DEAD["pytorch $model"]}"
    for v in "${VARIANT_COLS[@]}"; do
      k="pytorch:$v $model"
      [[ -n "${IPS[$k]:-}${WHY[$k]:-}" ]] || continue
      runs="${IPS[$k]:-none}"
      NOTES+="; PyTorch $v (img/s): ${runs% }"
      [[ -z "${WHY[$k]:-}" ]] || NOTES+=" (${WHY[$k]})"
      [[ -z "${EVENT_MS[$k]:-}" ]] || NOTES+=", CUDA-event median $(cell "${EVENT_MS[$k]}" "%.3f" n/a) ms"
    done
  fi
done

PEER_LINE="$TORCH_MISSING"
[[ -n "$PEER_LINE" ]] || PEER_LINE="PyTorch: $TORCH_VERSION ($TORCH_PY), float32 with TF32 off (AMP rows: torch.autocast bf16 / fp16 with channels_last, fp16 with a GradScaler), cudnn.benchmark on, data on the GPU."
REPORT="GPU: ${GPU_NAME:-unknown}${DRIVER:+ (driver $DRIVER)}, $DATE, $(nproc) CPU cores, drun $REV.

$TABLE

$STEPS timed steps after $WARMUP warm-up steps, $REPEATS interleaved repeats per framework (PyTorch's variants $TORCH_VARIANTS in one process each, torch.compile once per model after them), medians; ms/step = batch / images/s; ratio = drun ms/step / the faster of PyTorch's fp32 NCHW and channels_last (> 1: drun slower). drun: \`$DRUN --device cuda tools/bench/MODEL_bench.lua\`, each step one CUDA graph launch (the \`without graphs\` column: \`--cuda-graphs=false\`, each kernel launched by itself), cuDNN/cuBLAS in full float32 (the mixed columns: \`--precision\`, float16/bfloat16 tensor cores), input pipeline on the host. $PEER_LINE Wall time ${ELAPSED}s.$NOTES"
printf '%s\n' "$REPORT"
printf '%s\n' "$REPORT" > "$OUTDIR/gpu.md"
echo "# wrote $OUTDIR/gpu.md and $RAW" >&2
if (( FAILED )); then
  echo "error: some runs failed (see above)" >&2
  exit 1
fi
