#!/usr/bin/env bash
# The checks that need a GPU, on a lent GPU machine, from a bundle made here
# by tools/device/pack.sh (carried as .device):
#   1. the CUDA kernels against their CPU twins (test_cuda_kernels),
#   2. the cross-backend harness: every op of kernels/ops.hpp (test_backend_harness),
#      and steps captured as CUDA graphs against the same steps unrecorded (test_step_graphs),
#   3. the seed CNN on GPU vs CPU: 20 AllReduce steps, then one epoch's accuracy,
#      and three epochs of each mixed-precision policy against float32
#      (tests/gpu/gpu_train_test.py),
#   4. tools/bench/gpu.sh: drun (fp32, mixed_float16, mixed_bfloat16) vs PyTorch on
#      this GPU (seed CNN b256, ResNet-20 and -56 b128; PyTorch fp32 NCHW and
#      channels_last, AMP bf16 and fp16, torch.compile),
#   4b. the two character language models (issue 41), drun fp32 with and
#      without CUDA graphs against PyTorch eager fp32 (gpu_lm.md),
#   5. where the GPU time of a ResNet-20 step goes, drun and PyTorch, in float32
#      and in bfloat16 (drun's mixed_bfloat16, PyTorch AMP): Nsight Compute's
#      per-kernel summary (gpu_profile.log, gpu_profile_mixed.log; ncu works on
#      these machines, nsys does not);
# and with --cpu (or --cpu-only, without 1-5):
#   6. tools/bench/cpu.sh on the node's CPU: drun vs the machine's
#      PyTorch 2.x at 1 and 16 threads, seed CNN at batch 64 and 256, ResNet-20;
#      and the two character language models at 1 and 2 threads (issue 41's
#      check, on a host quieter than the 2-vCPU development machines: cpu_lm.md)
#      and the transformer's matrix products against PyTorch's (gemm_shapes.md);
#   7. where drun's CPU time goes on this node (tools/device/cpu_threads.sh:
#      timelines at 1 and 16 threads, the AVX2 path, runtime settings).
# The benchmark tables (gpu.md, gpu_b1024.md, cpu.md, cpu_threads.md) and every
# log, packed in gpu_checks.tar.gz, go to $OUT after every step, so that a run
# cut off at its time limit still brings back what it did (the device tool
# brings back at most 8 files).
#   device run: bash tools/device/gpu_checks.sh [--cpu | --cpu-only] [--no-gpu-tests] [--no-bench]
#               [--no-lm-bench] [--no-gpu-profile] [--no-cpu-bench] [--no-cpu-cnn] [--no-cpu-profile]
#               [--compile]   (carry: [".device"])
# Time on a lent machine (2026-11-27, an H100 that started in 30 s): 1-4 took
# 225 s; 5 (four Nsight Compute runs) is not yet timed; the CPU part took
# about 6 minutes (cpu.sh 300 s, cpu_threads.sh 45 s) before the language
# models were added, so it runs as a second call (--cpu-only) within the 30 s
# the machine stays warm. 2026-11-30, an H200: 1-3 took 13 s, 4b 100 s, the
# language models on its CPU (6, second half) 136 s; a start took 35 s once
# and about 4 minutes (one failed start) another time.
set -uo pipefail
gpu_tests=1 bench=1 lm_bench=1 gpu_profile=1 cpu_bench=0 cpu_cnn=1 cpu_profile=0 compile=0
for a in "$@"; do
  case "$a" in
    --cpu) cpu_bench=1 cpu_profile=1 ;;
    --cpu-only) gpu_tests=0 bench=0 lm_bench=0 gpu_profile=0 cpu_bench=1 cpu_profile=1 ;;
    --no-gpu-tests) gpu_tests=0 ;;
    --no-bench) bench=0 ;;
    --no-lm-bench) lm_bench=0 ;;
    --no-gpu-profile) gpu_profile=0 ;;
    --no-cpu-bench) cpu_bench=0 ;;
    --no-cpu-cnn) cpu_cnn=0 ;;
    --no-cpu-profile) cpu_profile=0 ;;
    --compile) compile=1 ;;
    *) echo "gpu_checks.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
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
snapshot() {  # what is done so far, to $OUT
  cp "$out"/*.md "$result/" 2>/dev/null
  tar -C "$out" --exclude='trace-*' -czf "$result/gpu_checks.tar.gz" .
}
step() {  # name, command...: runs it, keeps its log, remembers a failure
  local name="$1" t0=$SECONDS; shift
  echo "== $name: $*"
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  [[ $rc -eq 0 ]] || status=1
  snapshot
}
if ((gpu_tests)); then
  step ldd ldd "$bin/drun"
  step cuda_kernels timeout 120 "$bin/test_cuda_kernels"
  step backend_harness timeout 120 "$bin/test_backend_harness"
  step step_graphs timeout 120 "$bin/test_step_graphs"
  step gpu_train timeout 240 python3 tests/gpu/gpu_train_test.py "$bin/drun" "$bin/compare_checkpoints" "$root"
fi
if ((bench)); then
  mkdir -p build/bench
  # 2 repeats of 100 timed steps, no torch.compile (--compile adds it): the
  # PyTorch variants and ResNet-56 would otherwise take most of a 15-minute
  # reservation.
  step bench env DRUN="$bin/drun" bash tools/bench/gpu.sh --repeats 2 --steps 100 --run-timeout 90 --compile "$compile"
  cp build/bench/gpu.md "$out/gpu.md"; cp build/bench/gpu.jsonl "$out/gpu.jsonl" 2>/dev/null
  # Batch 1024, where arithmetic bounds the step: mixed precision against
  # float32, one repeat of 20 steps.
  step bench_b1024 env DRUN="$bin/drun" bash tools/bench/gpu.sh --models resnet56_b1024 --repeats 1 --run-timeout 90 \
    --steps 20 --warmup 5 --compile 0 --torch-variants fp32,amp_bf16,amp_fp16
  cp build/bench/gpu.md "$out/gpu_b1024.md"; cp build/bench/gpu.jsonl "$out/gpu_b1024.jsonl" 2>/dev/null
  snapshot
fi
if ((lm_bench)); then
  mkdir -p build/bench
  step bench_lm env DRUN="$bin/drun" bash tools/bench/gpu.sh --models lstm_lm,transformer_lm --repeats 3 \
    --steps 100 --warmup 10 --run-timeout 90 --compile 0 --torch-variants fp32 --drun-variants fp32,fp32_no_graphs
  cp build/bench/gpu.md "$out/gpu_lm.md"; cp build/bench/gpu.jsonl "$out/gpu_lm.jsonl" 2>/dev/null
  snapshot
fi
if ((gpu_profile)); then
  ncu="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)"
  gpu_profile() {
    [[ -x "$ncu" ]] || { echo "no ncu on this machine"; return 1; }
    local cifar=build/bench/cifar10-noise
    [[ -f "$cifar/data_batch_5.bin" ]] || python3 tests/data/make_cifar10.py "$cifar" --train 2560 --test 0
    # Past the warm-up (cuDNN's algorithm search), about two steps of kernels.
    echo "### drun"
    "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
      --launch-skip 4000 --launch-count 700 \
      "$bin/drun" -q --device cuda tools/bench/resnet20_bench.lua --dir "$cifar" --steps 6 --warmup 14
    echo "### pytorch"
    "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
      --launch-skip 4000 --launch-count 700 \
      /opt/torch/.venv/bin/python tools/bench/resnet20_torch.py --device cuda --n 3 --steps 6 --warmup 14
  }
  step gpu_profile gpu_profile
  # The same in bfloat16 (drun's mixed step was slower than its
  # float32 one at batch 128): drun's casts against PyTorch AMP's. More
  # kernels a step than float32, so more are skipped to pass the warm-up.
  gpu_profile_mixed() {
    [[ -x "$ncu" ]] || { echo "no ncu on this machine"; return 1; }
    local cifar=build/bench/cifar10-noise
    echo "### drun mixed_bfloat16"
    "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
      --launch-skip 6000 --launch-count 900 \
      "$bin/drun" -q --device cuda tools/bench/resnet20_bench.lua --dir "$cifar" --steps 6 --warmup 20 \
      --precision mixed_bfloat16
    echo "### pytorch amp_bf16"
    "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
      --launch-skip 6000 --launch-count 900 \
      /opt/torch/.venv/bin/python tools/bench/resnet20_torch.py --device cuda --n 3 --steps 6 --warmup 20 \
      --variants amp_bf16
  }
  step gpu_profile_mixed gpu_profile_mixed
fi
if ((cpu_bench && cpu_cnn)); then
  step cpu_bench env DRUN="$bin/drun" TORCH2_PY=/opt/torch/.venv/bin/python DEBIAN_TORCH=0 \
    bash tools/bench/cpu.sh --threads "1 16" --repeats 3 --short --models "seed_cnn seed_cnn256 resnet20"
  cp build/bench/cpu.md build/bench/cpu.jsonl "$out/" 2>/dev/null
  snapshot
fi
if ((cpu_bench)); then
  step cpu_bench_lm env DRUN="$bin/drun" TORCH2_PY=/opt/torch/.venv/bin/python DEBIAN_TORCH=0 \
    bash tools/bench/cpu.sh --threads "1 2" --repeats 3 --short --models "lstm_lm transformer_lm"
  cp build/bench/cpu.md "$out/cpu_lm.md" 2>/dev/null
  cp build/bench/cpu.jsonl "$out/cpu_lm.jsonl" 2>/dev/null
  # The transformer's matrix products, drun's against PyTorch's (MKL on
  # Intel): where its step wins or loses on this CPU.
  step gemm_shapes env GEMM_SHAPES="$bin/gemm_shapes" TORCH2_PY=/opt/torch/.venv/bin/python \
    bash tools/bench/gemm_shapes.sh --threads "1 2" --repeats 3
  cp build/bench/gemm_shapes.md "$out/" 2>/dev/null
  snapshot
fi
if ((cpu_profile)); then
  # Where the CPU step's time goes at 1 and 16 threads (its own report,
  # cpu_threads.md, beside this script's).
  step cpu_threads env OUT="$out" bash tools/device/cpu_threads.sh
fi
snapshot
exit $status
