#!/usr/bin/env bash
# Where drun's CPU step loses speed between 1 and all cores of the lent GPU
# node (16 threads reached only 3.5-4x one thread on the seed CNN):
#   1. a --timeline of the seed CNN (batch 64 and 256) and ResNet-20 (batch
#      128) at 1 and at all threads, summed per layer kind (layer_profile.py;
#      ResNet-20 per layer too: which convolutions scale worst), and the
#      AVX2 path's at 1 thread; conv_bench at 1 and all threads (which
#      convolution engine is fastest on this CPU, per ResNet shape and pass);
#   2. the seed CNN's images/s at all threads under changes that test one
#      cause each, interleaved, 3 repeats: as it runs; no prefetch thread
#      (the input made on the training thread: does the 17th thread cost?);
#      one thread fewer than cores; OMP_WAIT_POLICY=passive and =active
#      (libgomp's idle workers sleeping or spinning between parallel regions);
#      OMP_PROC_BIND=close (each worker on its own core).
# Runs from the bundle of tools/device/pack.sh (carry .device); the report
# goes to $OUT/cpu_threads.md, written after every part.
#   device run: bash tools/device/cpu_threads.sh   (carry: [".device"]; also the
#   last step of gpu_checks.sh --cpu / --cpu-only)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
result="${OUT:-/tmp/drun-threads-out}"
mkdir -p "$result" /tmp/drun
bin="${DRUN_BIN:-/tmp/drun/bin}"  # DRUN_BIN=build: a trial run here
if [[ -z "${DRUN_BIN:-}" ]]; then
  [[ -x /tmp/drun/bin/drun ]] || tar -C /tmp/drun -xJf .device/bundle.tar.xz || exit 1
  export LD_LIBRARY_PATH="/tmp/drun/lib:${LD_LIBRARY_PATH:-}"
fi
export DRUN_LUA_PATH="$root/bindings/lua" DRUN_MODELS_PATH="$root/models"
[[ -n "${DRUN_BIN:-}" ]] || export DRUN_DATA_DIR="$root/.device/fashion-mnist"
report="$result/cpu_threads.md"
all="$(nproc)"
{
  echo "CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1) ($all cores), $(date -u +%Y-%m-%dT%H:%MZ)"
  "$bin/drun" --version | sed 's/^/    /'
} > "$report"
cifar=build/bench/cifar10-noise
[[ -f "$cifar/data_batch_5.bin" ]] || python3 tests/data/make_cifar10.py "$cifar" --train 2560 --test 0 > /dev/null

profile() {  # threads, title, script and its arguments...
  local t="$1" title="$2" trace=/tmp/drun/trace.json; shift 2
  timeout 120 "$bin/drun" -q --device cpu --threads "$t" --timeline "$trace" "$@" > /dev/null &&
    python3 tools/bench/layer_profile.py "$trace" --title "$title, $t threads" >> "$report" &&
    if [[ "$title" == ResNet* ]]; then
      python3 tools/bench/layer_profile.py "$trace" --by-layer --title "$title, $t threads, per layer" >> "$report"
    fi
  echo >> "$report"
}
for t in 1 "$all"; do
  profile "$t" "seed CNN b64" tools/bench/seed_cnn_bench.lua --steps 200 --warmup 10
  profile "$t" "seed CNN b256" tools/bench/seed_cnn_bench.lua --batch-size 256 --steps 60 --warmup 5
done
for t in "$all" 1; do
  profile "$t" "ResNet-20 b128" tools/bench/resnet20_bench.lua --dir "$cifar" --n 3 --steps 8 --warmup 2
done
# The AVX2 path (what a Zen 3 or any AVX2-only CPU runs) on this CPU.
DRUN_ISA=avx2 profile 1 "seed CNN b64, DRUN_ISA=avx2" tools/bench/seed_cnn_bench.lua --steps 200 --warmup 10
DRUN_ISA=avx2 profile 1 "ResNet-20 b128, DRUN_ISA=avx2" tools/bench/resnet20_bench.lua --dir "$cifar" --n 3 --steps 8 --warmup 2

# Which convolution engine is fastest here, per ResNet shape and pass: the
# dispatcher's rule (kernels/cpu/conv2d.cpp) was measured on a Zen 4, and on
# a Zen 5 F(2x2) beat its F(4x4) on the 8x8 maps (docs/benchmarks.md).
conv_bench="$bin/conv_bench"; [[ -z "${DRUN_BIN:-}" ]] || conv_bench=build/tools/bench/conv_bench
for t in 1 "$all"; do
  {
    echo "conv_bench --threads $t --batch 128 --repeats 5 (ms, medians; forward / filter gradient / input gradient):"
    echo
    timeout 120 "$conv_bench" --threads "$t" --batch 128 --repeats 5 | python3 -c '
import collections, json, sys
ms = collections.defaultdict(dict)
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line)
        ms[(d["shape"], d["engine"])][d["pass"]] = d["ms"]
print("| shape | engine | forward | filter | data |")
print("| --- | --- | --- | --- | --- |")
for (shape, engine), p in ms.items():
    print("| %s | %s | %s |" % (shape, engine, " | ".join("%.3f" % p.get(k, float("nan"))
                                                      for k in ("forward", "filter", "data"))))'
    echo
  } >> "$report"
done

noprefetch=tools/bench/seed_cnn_noprefetch.lua  # beside the original: the same require path
sed 's/:prefetch(2)/:prefetch(0)/' tools/bench/seed_cnn_bench.lua > "$noprefetch"
variant_cmd() {  # variant name -> the command up to drun's options
  case "$1" in
    as_is|no_prefetch) echo "$bin/drun --threads $all" ;;
    one_fewer)  echo "$bin/drun --threads $((all - 1))" ;;
    passive)    echo "env OMP_WAIT_POLICY=passive $bin/drun --threads $all" ;;
    active)     echo "env OMP_WAIT_POLICY=active $bin/drun --threads $all" ;;
    bind_close) echo "env OMP_PROC_BIND=close OMP_PLACES=cores $bin/drun --threads $all" ;;
  esac
}
variants="as_is no_prefetch one_fewer passive active bind_close"
declare -A runs=()
for batch in 64 256; do
  steps=400; [[ $batch == 256 ]] && steps=150
  for r in 1 2 3; do
    for v in $variants; do
      # shellcheck disable=SC2046
      script=tools/bench/seed_cnn_bench.lua; [[ $v != no_prefetch ]] || script="$noprefetch"
      ips="$(timeout 60 $(variant_cmd "$v") -q --device cpu "$script" \
               --batch-size "$batch" --steps "$steps" --warmup 10 2>/dev/null |
             grep -oE '"images_per_sec": [0-9.]+' | grep -oE '[0-9.]+$')"
      runs["$v $batch"]+="${ips:-failed} "
    done
  done
  {
    echo "seed CNN b$batch, $all threads unless named, images/s of 3 interleaved runs ($steps steps):"
    for v in $variants; do echo "- $v: ${runs["$v $batch"]}"; done
    echo
  } >> "$report"
done
rm -f "$noprefetch"
cat "$report"
