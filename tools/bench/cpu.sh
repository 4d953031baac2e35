#!/usr/bin/env bash
# CPU training throughput, drun against the peers a user would pick: PyTorch
# 2.x from PyPI (oneDNN; in build/bench/torch-venv, made here on first use)
# and Debian's python3-torch in their best configuration (docs/benchmarks.md).
#
#   tools/bench/cpu.sh [--threads "1 2"] [--repeats 5] [--models "seed_cnn resnet20 resnet56"] [--isa avx2] [--short]
#   tools/bench/cpu.sh --models "lstm_lm transformer_lm"
#
# --isa avx2 caps every framework at AVX2 + FMA on a CPU that has more: drun's
# kernels (DRUN_ISA) and OpenBLAS core (OPENBLAS_CORETYPE=Haswell), PyTorch's
# oneDNN (ONEDNN_MAX_CPU_ISA), ATen (ATEN_CPU_CAPABILITY) and MKL
# (MKL_ENABLE_INSTRUCTIONS): the instructions of an AVX2-only CPU such as a
# Zen 3, on this CPU's cores and caches.
#
# --short runs half the timed steps (a lent machine's minutes are few).
#
# Also (not in the default list): seed_cnn256 (the seed CNN at batch 256,
# for thread scaling), lstm_lm and transformer_lm (below). On a
# machine that reaches no package archive (the lent GPU node), TORCH2_PY names
# a Python with PyTorch 2.x and DEBIAN_TORCH=0 leaves Debian's column out.
#
# Models: the seed CNN at batch 64 on Fashion-MNIST (tools/bench/seed_cnn_*),
# ResNet-20 and ResNet-56 (option B) at batch 128 on random 32x32x3 images
# (tools/bench/resnet20_*, --n 3 and --n 9), and two character language
# models at batch 32 on windows of 64 random tokens of 96, Adam lr 1e-3
# (tools/bench/char_lm_*): lstm_lm (models/lstm_lm.lua: embedding 64, LSTM
# 256, 359,520 parameters) and transformer_lm (models/transformer_lm.lua:
# width 128, 4 heads, 2 pre-norm blocks, MLP 512, 429,664 parameters); their
# "img/s" are sequences/s. For every model and thread count
# the three run in turn, `repeats` times, in an order that rotates each
# repeat so that machine noise hits all of them; the table has the medians
# (images/s) and drun's ratio to each peer. DRUN_BASELINE names a second drun
# binary (an earlier build) that runs in the same rotation, with a column of
# its own and drun's ratio to it: a change's before/after on one machine. Each PyTorch run trains the model
# in its default NCHW layout and in channels_last (TORCH_VARIANTS,
# torch_timing.py), each on a fresh model, and counts the faster: PyTorch's
# best eager float32; cpu.jsonl keeps both (the language models, whose
# batches have no channels, run fp32 alone). The CPU model (lscpu) and what
# drun runs on (drun --version) head the report, written to build/bench/cpu.md
# (raw JSON lines to build/bench/cpu.jsonl). DRUN selects the binary
# (default build/drun); DRUN_ISA passes through to it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

THREADS="1 2"
REPEATS=5
MODELS="seed_cnn resnet20 resnet56"
ISA=""
SHORT=1
usage() {
  echo "usage: tools/bench/cpu.sh [--threads \"1 2\"] [--repeats 5] [--models \"seed_cnn resnet20 resnet56\"] [--isa avx2] [--short]" >&2
  echo "  models: seed_cnn seed_cnn256 resnet20 resnet56 lstm_lm transformer_lm" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) [[ $# -ge 2 ]] || usage; THREADS="$2"; shift 2 ;;
    --repeats) [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --models)  [[ $# -ge 2 ]] || usage; MODELS="$2"; shift 2 ;;
    --isa)     [[ $# -ge 2 && "$2" == avx2 ]] || usage; ISA="$2"; shift 2 ;;
    --short)   SHORT=2; shift ;;
    *) usage ;;
  esac
done

# An OPENBLAS_CORETYPE the machine sets for every process (this project's
# development machines set Haswell, AVX2 code, on CPUs with AVX-512) would
# hold back drun and Debian's PyTorch, the two OpenBLAS users, and not PyPI's
# (MKL, oneDNN): each framework runs the kernels it picks itself, and the
# header says what was dropped.
INHERITED_CORETYPE="${OPENBLAS_CORETYPE:-}"
unset OPENBLAS_CORETYPE DRUN_BLAS_CORE_CHOSEN
if [[ "$ISA" == avx2 ]]; then
  export DRUN_ISA=avx2 OPENBLAS_CORETYPE=Haswell ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 \
    MKL_ENABLE_INSTRUCTIONS=AVX2
fi

OUTDIR=build/bench
DRUN="${DRUN:-build/drun}"
DEBIAN_PY=/usr/bin/python3
VENV="$OUTDIR/torch-venv"
TORCH2_PY="${TORCH2_PY:-$VENV/bin/python}"
DEBIAN_TORCH="${DEBIAN_TORCH:-1}"
BASELINE="${DRUN_BASELINE:-}"
GLIBC_BEST="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"
TORCH_VARIANTS="${TORCH_VARIANTS:-fp32,channels_last}"
DATA_DIR="$OUTDIR/cifar10-noise"
mkdir -p "$OUTDIR"
[[ -x "$DRUN" ]] || { echo "error: $DRUN is missing; run tools/bootstrap first" >&2; exit 1; }
[[ -z "$BASELINE" || -x "$BASELINE" ]] || { echo "error: DRUN_BASELINE $BASELINE is not executable" >&2; exit 1; }

sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
if [[ "$DEBIAN_TORCH" == 1 ]] && ! "$DEBIAN_PY" -c 'import torch, numpy' 2>/dev/null; then
  echo "# installing Debian's PyTorch (python3-torch)" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-torch python3-numpy >&2
fi
if [[ "$TORCH2_PY" == "$VENV/bin/python" ]] && ! "$VENV/bin/python" -c 'import torch, numpy' 2>/dev/null; then
  # PyPI's wheel brings its CUDA libraries too (several GB); the CPU-only
  # index is not reachable from every machine this runs on.
  echo "# installing PyTorch 2.x from PyPI into $VENV" >&2
  "$DEBIAN_PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check torch numpy >&2
fi
if [[ " $MODELS " == *" resnet"* && ! -f "$DATA_DIR/data_batch_5.bin" ]]; then
  "$DEBIAN_PY" tests/data/make_cifar10.py "$DATA_DIR" --train 2560 --test 0 >&2
fi

# model -> drun script and arguments, PyTorch script and arguments
model_args() {  # $1 = model, $2 = drun|torch, $3 = threads
  local steps warmup script extra
  case "$1" in
    seed_cnn)    steps=300 warmup=20 script=seed_cnn extra="" ;;
    seed_cnn256) steps=100 warmup=10 script=seed_cnn extra="--batch 256" ;;
    resnet20)    steps=30 warmup=3 script=resnet20 extra="--n 3" ;;
    resnet56)    steps=10 warmup=2 script=resnet20 extra="--n 9" ;;
    lstm_lm)     steps=50 warmup=5 script=char_lm extra="--model lstm" ;;
    transformer_lm) steps=50 warmup=5 script=char_lm extra="--model transformer" ;;
    *) echo "unknown model $1" >&2; exit 2 ;;
  esac
  # The small models' steps grow with the threads (x threads/4 from 8 on): at
  # 16 threads 150 steps of the seed CNN took 75 ms, too short to time on that
  # node; the language models' batches of 32 are small too.
  if [[ "$script" == seed_cnn || "$script" == char_lm ]] && [[ "${3:-1}" -ge 8 ]]; then
    steps=$((steps * $3 / 4))
  fi
  steps=$((steps / SHORT)) warmup=$(((warmup + SHORT - 1) / SHORT))
  if [[ "$2" == drun ]]; then
    extra="${extra/--batch /--batch-size }"
    [[ "$script" != resnet20 ]] || extra+=" --dir $DATA_DIR"
    echo "tools/bench/${script}_bench.lua $extra --steps $steps --warmup $warmup"
  else
    echo "tools/bench/${script}_torch.py $extra --steps $steps --warmup $warmup"
  fi
}

RAW="$OUTDIR/cpu.jsonl"
: > "$RAW"
ERRLOG="$(mktemp)"
trap 'rm -f "$ERRLOG"' EXIT

run_one() {  # $1 = model, $2 = drun|pytorch2|debian, $3 = threads; prints images/s
  local model="$1" who="$2" t="$3" out ips
  # shellcheck disable=SC2046
  if [[ "$who" == drun || "$who" == baseline ]]; then
    local exe="$DRUN"; [[ "$who" == baseline ]] && exe="$BASELINE"
    out="$("$exe" --device cpu --threads "$t" $(model_args "$model" drun "$t") 2>"$ERRLOG")" || {
      echo "error: drun failed ($model, $t threads):" >&2; tail -n 20 "$ERRLOG" >&2; return 1; }
  else
    local py="$DEBIAN_PY"; [[ "$who" == pytorch2 ]] && py="$TORCH2_PY"
    # Both of PyTorch's float32 memory layouts, each on a fresh model: its
    # default NCHW and channels_last (NHWC, as drun), the faster counting.
    # A language model's token batches have no layout: channels_last would
    # be a second fp32 run, the faster of two counting.
    local variants="$TORCH_VARIANTS"
    if [[ "$model" == *_lm ]]; then
      variants="$(tr , '\n' <<<"$variants" | grep -vx channels_last | paste -sd, -)" || true
      [[ -n "$variants" ]] || variants=fp32
    fi
    out="$(env OMP_NUM_THREADS="$t" OPENBLAS_NUM_THREADS=1 GLIBC_TUNABLES="$GLIBC_BEST" \
           "$py" $(model_args "$model" torch "$t") --threads "$t" --variants "$variants" \
           2>"$ERRLOG")" || {
      echo "error: $who failed ($model, $t threads):" >&2; tail -n 20 "$ERRLOG" >&2; return 1; }
  fi
  local line variant v
  ips=""
  while read -r line; do
    v="$(grep -oE '"images_per_sec"[[:space:]]*:[[:space:]]*[0-9.eE+-]+' <<<"$line" | sed -E 's/.*:[[:space:]]*//')" || true
    [[ -n "$v" ]] || continue
    variant="$(grep -oE '"variant"[[:space:]]*:[[:space:]]*"[a-z_0-9]+"' <<<"$line" | sed -E 's/.*"([a-z_0-9]+)"$/\1/')" || true
    printf '{"model":"%s","run":"%s","variant":"%s","threads":%s,"images_per_sec":%s}\n' \
      "$model" "$who" "${variant:-drun}" "$t" "$v" >> "$RAW"
    echo "# $model $who ${variant:+$variant }threads=$t images/s=$v" >&2
    ips="$(awk -v a="${ips:-0}" -v b="$v" 'BEGIN { print (b > a ? b : a) }')"
  done < <(printf '%s\n' "$out" | grep '^[[:space:]]*{')
  [[ -n "$ips" ]] || { echo "error: no images_per_sec from $who ($model)" >&2; return 1; }
  echo "$ips"
}

median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'
}

torch_version() { "$1" -c 'import torch; print(torch.__version__)' 2>/dev/null; }
V2="$(torch_version "$TORCH2_PY")"
VD="not run"; [[ "$DEBIAN_TORCH" == 1 ]] && VD="$(torch_version "$DEBIAN_PY")"
PEERS="pytorch2 debian"; [[ "$DEBIAN_TORCH" == 1 ]] || PEERS="pytorch2"
[[ -n "$BASELINE" ]] && PEERS+=" baseline"
CPU="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
HEADER="CPU: $CPU ($(nproc) cores), $(date -u +%Y-%m-%dT%H:%MZ)
$("$DRUN" --version | sed 's/^/    /')"
[[ -n "$INHERITED_CORETYPE" ]] && HEADER+="
OPENBLAS_CORETYPE=$INHERITED_CORETYPE from the environment not passed on (every framework picks its own kernels)"
[[ -n "$BASELINE" ]] && HEADER+="
baseline: $BASELINE, $("$BASELINE" --version | head -n 1)"
[[ "$ISA" == avx2 ]] && HEADER+="
every framework capped at AVX2 + FMA (--isa avx2): DRUN_ISA=$DRUN_ISA OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY MKL_ENABLE_INSTRUCTIONS=$MKL_ENABLE_INSTRUCTIONS"
TABLE="| model | threads | drun img/s | PyTorch $V2 img/s | Debian PyTorch $VD img/s | drun / $V2 | drun / Debian |"
RULE="| --- | --- | --- | --- | --- | --- | --- |"
[[ -n "$BASELINE" ]] && TABLE+=" baseline img/s | drun / baseline |" RULE+=" --- | --- |"
TABLE+=$'\n'"$RULE"
NOTES=""
echo "$HEADER" >&2
for model in $MODELS; do
  for t in $THREADS; do
    d=(); p=(); b=(); o=()
    for ((r = 0; r < REPEATS; r++)); do
      # Rotate the order each repeat: drun first, then second, then last.
      order="drun $PEERS"
      for ((k = 0; k < r; k++)); do order="${order#* } ${order%% *}"; done
      for who in $order; do
        v="$(run_one "$model" "$who" "$t")" || exit 1
        case "$who" in
          drun) d+=("$v") ;; pytorch2) p+=("$v") ;; debian) b+=("$v") ;; baseline) o+=("$v") ;;
        esac
      done
    done
    dm="$(median "${d[@]}")"; pm="$(median "${p[@]}")"; bm="nan"
    [[ ${#b[@]} -gt 0 ]] && bm="$(median "${b[@]}")"
    TABLE+=$'\n'"$(awk -v m="$model" -v t="$t" -v d="$dm" -v p="$pm" -v b="$bm" 'BEGIN {
      if (b == "nan") printf "| %s | %d | %.0f | %.0f | - | %.2f | - |", m, t, d, p, d / p
      else printf "| %s | %d | %.0f | %.0f | %.0f | %.2f | %.2f |", m, t, d, p, b, d / p, d / b }')"
    if [[ ${#o[@]} -gt 0 ]]; then
      TABLE+="$(awk -v d="$dm" -v o="$(median "${o[@]}")" 'BEGIN { printf " %.0f | %.3f |", o, d / o }')"
    fi
    NOTES+=$'\n'"- $model, $t threads: drun ${d[*]}; PyTorch $V2 ${p[*]}; Debian ${b[*]}"
    [[ ${#o[@]} -gt 0 ]] && NOTES+="; baseline ${o[*]}"
  done
done
LM_NOTE=""
[[ " $MODELS " == *_lm\ * ]] && LM_NOTE="; the language models fp32 alone, their img/s sequences of 64 tokens/s"
REPORT="$HEADER

$TABLE

Medians of $REPEATS interleaved repeats; PyTorch: per run the faster of its float32 layouts ($TORCH_VARIANTS)$LM_NOTE. Runs (images/s):$NOTES"
printf '%s\n' "$REPORT" | tee "$OUTDIR/cpu.md"
echo "# wrote $OUTDIR/cpu.md and $RAW" >&2
