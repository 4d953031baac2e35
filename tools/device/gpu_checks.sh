#!/usr/bin/env bash
# The GPU checks of issue 8, on a lent GPU machine, from a bundle made here
# by tools/device/pack.sh (carried as .device):
#   1. the CUDA kernels against their CPU twins (test_cuda_kernels),
#   2. the cross-backend harness: every op of kernels/ops.hpp (test_backend_harness),
#   3. the seed CNN on GPU vs CPU: 20 AllReduce steps, then one epoch's accuracy
#      (tests/gpu/gpu_train_test.py),
#   4. tools/bench/gpu.sh: drun vs PyTorch on this GPU (seed CNN b256, ResNet-20 b128),
#   5. tools/bench/cpu.sh on the node's CPU (issue 14): drun vs the machine's
#      PyTorch 2.x at 1 and 16 threads, seed CNN at batch 64 and 256, ResNet-20.
# The benchmark tables (gpu.md, cpu.md) and every log, packed in
# gpu_checks.tar.gz, go to $OUT (the device tool brings back at most 8 files).
#   device run: bash tools/device/gpu_checks.sh [--no-bench] [--no-cpu-bench]   (carry: [".device"])
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
result="${OUT:-/tmp/drun-gpu-out}"
out=/tmp/drun-gpu-logs
mkdir -p "$result" "$out" /tmp/drun
tar -C /tmp/drun -xJf .device/bundle.tar.xz || exit 1
bin=/tmp/drun/bin
# CUDA's libraries from the machine's Python packages (nvidia-*), then the bundle's.
nv="$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib /usr/local/cuda/lib64 2>/dev/null | tr '\n' ':')"
export LD_LIBRARY_PATH="/tmp/drun/lib:${nv}${LD_LIBRARY_PATH:-}"
export DRUN_LUA_PATH="$root/bindings/lua" DRUN_MODELS_PATH="$root/models"
export DRUN_DATA_DIR="$root/.device/fashion-mnist" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
status=0
step() {  # name, command...: runs it, keeps its log, remembers a failure
  local name="$1"; shift
  echo "== $name: $*"
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  echo "== $name: exit $rc"
  [[ $rc -eq 0 ]] || status=1
}
step ldd ldd "$bin/drun"
step cuda_kernels "$bin/test_cuda_kernels"
step backend_harness "$bin/test_backend_harness"
step gpu_train python3 tests/gpu/gpu_train_test.py "$bin/drun" "$bin/compare_checkpoints" "$root"
if [[ " $* " != *" --no-bench "* ]]; then
  mkdir -p build/bench
  step bench env DRUN="$bin/drun" bash tools/bench/gpu.sh
  cp build/bench/gpu.md build/bench/gpu.jsonl "$out/" 2>/dev/null
fi
if [[ " $* " != *" --no-cpu-bench "* ]]; then
  step cpu_bench env DRUN="$bin/drun" TORCH2_PY=/opt/torch/.venv/bin/python DEBIAN_TORCH=0 \
    bash tools/bench/cpu.sh --threads "1 16" --repeats 3 --models "seed_cnn seed_cnn256 resnet20"
  cp build/bench/cpu.md build/bench/cpu.jsonl "$out/" 2>/dev/null
fi
cp "$out"/gpu.md "$out"/cpu.md "$result/" 2>/dev/null
tar -C "$out" -czf "$result/gpu_checks.tar.gz" .
exit $status
