#!/usr/bin/env bash
# Packs what the GPU checks need onto a lent GPU machine (the `device` tool),
# which has the NVIDIA driver, CUDA's libraries (in its PyTorch venv) and
# Python, but not drun's Debian libraries, and reaches no package archive:
#   .device/bundle.tar.xz  build/drun with its CUDA backend module (libdrun_cuda.so,
#                          which drun loads from beside itself), the GPU test programs,
#                          conv_bench (tools/device/cpu_threads.sh), gemm_shapes
#                          (tools/bench/gemm_shapes.sh), and the shared
#                          libraries they load (ldd) except the C library's
#                          and CUDA's own (cuBLAS, cuDNN, NCCL: the machine's)
#   .device/fashion-mnist  the data set the GPU training test reads
# .device is ignored by git (.git/info/exclude); name it in the run's carry.
# Then there: bash tools/device/gpu_checks.sh (see that file).
#   tools/device/pack.sh            (after ninja -C build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
programs=(build/drun build/libdrun_cuda.so build/tests/unit/cuda/test_cuda_kernels build/tests/unit/cuda/test_backend_harness
          build/tests/unit/cuda/test_step_graphs build/tests/resume/compare_checkpoints build/tests/dist/nccl_allreduce
          build/tools/bench/conv_bench build/tools/bench/gemm_shapes)
for p in "${programs[@]}"; do
  [[ -x "$p" ]] || { echo "pack: $p is missing; build with CUDA first (ninja -C build)" >&2; exit 1; }
done
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "${programs[@]}" "$stage/bin/"
# The closure of shared libraries, without glibc's (the machine's is newer)
# and without CUDA's big libraries (the machine's PyTorch venv has them).
ldd "${programs[@]}" | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+)\.so' |
  grep -v -E '/lib(cublas|cublasLt|cudnn[a-z_]*|nccl)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
# libstdc++ from this build's GCC: the machine's may be older.
cp -L "$(g++ -print-file-name=libstdc++.so.6)" "$stage/lib/"
mkdir -p .device
tar -C "$stage" -cJf .device/bundle.tar.xz bin lib
data="${DRUN_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
mkdir -p .device/fashion-mnist
cp "$data"/*-ubyte.gz .device/fashion-mnist/
du -sh .device/bundle.tar.xz .device/fashion-mnist
