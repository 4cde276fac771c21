#!/usr/bin/env bash
# The device check, for a machine with an NVIDIA GPU: configures the CUDA build (preset cuda, for
# this GPU's architecture only, to keep the build short), builds what the GPU tests need, runs
# every test labelled cuda or gpu (the CUDA kernels against the Reference, device-memory spans,
# every compressor's and strategy's MPI test and DeMo's PyTorch fixture on the CUDA backend at 1
# and 2 ranks, the collectives, compressors and strategies over NCCL at 1 rank, the model's kernels and the model against its PyTorch fixture in fp32 and bf16,
# `lowcomm info`, the end-to-end benchmark), then `lowcomm bench compressors` and `lowcomm bench
# model` (gpt2-124m, fp32 and bf16) on the CUDA and the Cpu backends. Sized for well under 8
# minutes on one H200 with 16 cores (each model benchmark is cut off after 60 s). Writes its log to
# $OUT (or ./gpu-check) as gpu-check.log.
#
# What it cannot measure yet: speed without host staging or page migration. The compressors'
# payloads are host memory, so their kernels' outputs are copied back for MPI; the model's
# buffers, AdamW's state and the strategies' are managed memory, which the collectives read on the
# host. The GB/s and tokens/s below include those costs.
#
# Usage: scripts/gpu-check.sh              configure, build and check (needs Debian's packages or a
#                                          mirror; CUDA_ARCHITECTURES=90 overrides the detected one)
#        scripts/gpu-check.sh --prebuilt   check the build that scripts/gpu-bundle.sh packed on
#                                          another machine (gpu-bundle/bundle.tar.xz): for a GPU node
#                                          with CUDA and no package mirror
set -euo pipefail
prebuilt=false
case "${1:-}" in
  --prebuilt) prebuilt=true ;;
  "") ;;
  *) echo "gpu-check: unknown argument '$1' (takes none, or --prebuilt)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv || echo "nvidia-smi: not available"
if $prebuilt; then
  source scripts/gpu-prebuilt-env.sh
else
  architecture=${CUDA_ARCHITECTURES:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.' || true)}
  architecture=${architecture:-90}
  echo "== configure (preset cuda, CMAKE_CUDA_ARCHITECTURES=$architecture) and build =="
  bash scripts/install-deps.sh
  start=$SECONDS
  cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES="$architecture" >/dev/null
  source scripts/cuda-test-targets.sh
  cmake --build --preset cuda --parallel "$(nproc)" --target "${cuda_test_targets[@]}"
  echo "# build: $((SECONDS - start)) s"
fi
echo "== tests labelled cuda or gpu =="
status=0
ctest --preset cuda -L "cuda|gpu" --output-on-failure --timeout 150 -j 4 || status=$?
echo "== lowcomm info =="
build/cuda/apps/lowcomm/lowcomm info | sed -n '/Compute backends/,/^$/p'
echo "== bench compressors, CUDA backend, 1 rank (%copy: of the HBM's device-to-device copy rate) =="
build/cuda/apps/lowcomm/lowcomm bench compressors --set compute.backend=cuda --set bench.iterations=3 || status=$?
echo "== bench compressors, Cpu backend, 1 rank (the same run's baseline) =="
build/cuda/apps/lowcomm/lowcomm bench compressors --set bench.iterations=3 || status=$?
bench_model() { timeout 60 build/cuda/apps/lowcomm/lowcomm bench model "$@" || status=$?; }
# Datasheet peaks (dense TFLOP/s) for the MFU line: bf16 on the tensor cores, fp32 without them
# (cuBLAS's default math mode uses no TF32). Another GPU gets no MFU line.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
case "$gpu" in
  *H100*|*H200*) peak_bf16=989.4 peak_fp32=66.9 ;;
  *A100*) peak_bf16=312 peak_fp32=19.5 ;;
  *) peak_bf16=0 peak_fp32=0 ;;
esac
echo "== bench model, gpt2-124m: CUDA backend (managed memory, AdamW on the GPU), fp32 and bf16 =="
bench_model --backend cuda --precision fp32 --peak-tflops "$peak_fp32" --steps 3 --warmup 1
bench_model --backend cuda --precision bf16 --peak-tflops "$peak_bf16" --steps 3 --warmup 1
bench_model --backend cuda --precision fp32 --peak-tflops "$peak_fp32" --batch 8 --seq 1024 --steps 3 --warmup 1
bench_model --backend cuda --precision bf16 --peak-tflops "$peak_bf16" --batch 8 --seq 1024 --steps 3 --warmup 1
echo "== bench model, gpt2-124m, Cpu backend (the same run's baseline) =="
bench_model --backend cpu --steps 3 --warmup 1
echo "# gpu-check: exit status $status"
exit "$status"
