#!/usr/bin/env bash
# Codec throughput of every built-in compressor against PyTorch, same machine, same run:
#   `lowcomm bench compressors` (encode + collectives + decode through CompressedAllReduce, GPT-2
#   small's shapes, built-in defaults, the slowest rank's best of ITERATIONS) under mpiexec, then
#   scripts/bench_compressors_torch.py (the same math in Debian's PyTorch: DeMo's reference
#   TransformDCT/CompressDCT path, top-k + EF, random-k + EF, 8-bit quantisation, PowerSGD rank 2
#   + EF, fp32 `none`; one process standing in for the ranks, which all hold the same gradient).
# Prints both outputs, then a SUMMARY per codec and shape: lowcomm GB/s, torch GB/s (fp32 input
# bytes of one rank's tensor / time), lowcomm/torch, and each one's fraction of its limit, both
# limits measured in this run (lowcomm's bench header: copy GB/s and 768³ sgemm GFLOP/s on rank 0
# at its thread count; the torch script's own header: the same two probes at torch's threads):
#   none, randomk, topk, quantize, and powersgd's dense 1-D case: GB/s ÷ copy GB/s (lowcomm's %copy)
#   powersgd (n × m, r = min(n, m, 2)): products P = MQ, Q = MᵀP̂, out = P̂Qᵀ, 2·n·m·r flops each,
#     so GFLOP/s = 6·n·m·r / t = 1.5·r·GB/s (t = 4·n·m bytes / GB/s); ÷ sgemm GFLOP/s
#     (Gram-Schmidt's O(n·r²) not counted)
#   dct_topk (R × C in h × w blocks, h, w the largest divisors ≤ 64): the dense-basis block DCT,
#     encode C_h·X·C_wᵀ = 2·h·w·(h + w) flops per block and the same again for the decode, so
#     4·R·C·(h + w) flops, GFLOP/s = (h + w)·GB/s; a 1-D tensor in chunks of c: 4·n·c flops,
#     GFLOP/s = c·GB/s; ÷ sgemm GFLOP/s (a GEMM-equivalent rate: a fast DCT can exceed 100 %)
#
# Default: lowcomm at 2 ranks × 1 thread (one rank per core on this 2-core machine, the layout a
# multi-rank job has), torch at 1 process × 2 threads (RANKS × THREADS: the same cores). Both use
# the whole machine, but lowcomm's GB/s is per rank while its 2 ranks run at once, so it is half of
# what the machine processes; torch puts both cores on one gradient. The ratio therefore favours
# torch by up to 2× for compute-bound codecs (less for memory-bound ones, as the two ranks share
# the memory bandwidth). TORCH_THREADS=1 compares one core with one core instead. TORCH_PROCESSES=
# RANKS (with TORCH_THREADS=1) is the like-for-like layout: as many torch processes as ranks, one
# thread each, running at once and sharing the memory bandwidth as the ranks do; each codec and
# shape keeps the slowest process's figure, as lowcomm keeps its slowest rank's.
#
# Usage: scripts/bench-compressors.sh [build-dir] [ranks]   (defaults: build/release, 2)
# Env: ITERATIONS (timed runs, best kept; default 3), THREADS (lowcomm threads per rank, 1),
#      TORCH_THREADS (default RANKS × THREADS, or 1 with TORCH_PROCESSES > 1), TORCH_PROCESSES
#      (torch processes at once, 1), WARMUP (torch's untimed runs, 1; lowcomm always
#      warms up once), CODECS (comma-separated, default all), SHAPES (transformer, the default, or
#      small: 48x48 and 48, a smoke test of the script itself).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
ranks=${2:-2}
iterations=${ITERATIONS:-3}
threads=${THREADS:-1}
torch_processes=${TORCH_PROCESSES:-1}
if [ "$torch_processes" -gt 1 ]; then torch_threads=${TORCH_THREADS:-1}; else torch_threads=${TORCH_THREADS:-$((ranks * threads))}; fi
warmup=${WARMUP:-1}
codecs=${CODECS:-all}
shapes=${SHAPES:-transformer}
lowcomm="$build/apps/lowcomm/lowcomm"
[ -x "$lowcomm" ] || { echo "bench-compressors: $lowcomm not built (cmake --build $build --target lowcomm_cli)" >&2; exit 1; }
command -v mpiexec >/dev/null || { echo "bench-compressors: needs mpiexec (apt-get install -y openmpi-bin)" >&2; exit 1; }
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "bench-compressors: needs Debian's PyTorch for /usr/bin/python3 (apt-get install -y python3-torch)" >&2
  exit 1
fi
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
case "$blas" in
  *openblas*|*blis*|*mkl*) ;;
  *) echo "bench-compressors: warning: torch's libblas.so.3 is $blas (reference BLAS is ~11x slower;" \
          "apt-get install -y libopenblas0-pthread)" >&2 ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_flags=()
[ "$ranks" -gt "$(nproc)" ] && mpi_flags+=(--oversubscribe)
sets=(--set "bench.iterations=$iterations" --set "bench.compressors=$codecs" --set "bench.shapes=$shapes")
sets+=(--set "compute.threads=$threads")

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo -dirty);" \
     "lowcomm $ranks ranks x $threads threads; torch $torch_processes process(es) x $torch_threads threads (libblas.so.3: $blas);" \
     "best of $iterations"
ours=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
         mpiexec -n "$ranks" "${mpi_flags[@]}" -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS \
         "$lowcomm" bench compressors "${sets[@]}")
echo "$ours"
# TORCH_PROCESSES copies at once; every "torch <codec> <shape> gbps=X ms=Y" row keeps the slowest
# copy's (the headers are the first copy's).
torch_outputs=$(mktemp -d)
trap 'rm -rf "$torch_outputs"' EXIT
for ((p = 0; p < torch_processes; p++)); do
  OMP_NUM_THREADS=$torch_threads /usr/bin/python3 scripts/bench_compressors_torch.py --threads "$torch_threads" \
    --ranks "$ranks" --iterations "$iterations" --warmup "$warmup" --codecs "$codecs" --shapes "$shapes" \
    > "$torch_outputs/$p.txt" &
done
wait
torch=$(awk '
  FNR == NR && /^#/ { print; next }
  $1 == "torch" && $4 ~ /^gbps=/ {
    key = $2 " " $3; g = substr($4, 6) + 0
    if (!(key in best)) { order[++n] = key; best[key] = g; line[key] = $0 }
    else if (g < best[key]) { best[key] = g; line[key] = $0 }
  }
  END { for (i = 1; i <= n; i++) print line[order[i]] }' "$torch_outputs"/*.txt)
echo "$torch"

# lowcomm's data rows: compressor shape in(MB) payload(B) ratio time(ms) GB/s %copy codec(ms)
# comm(ms) modelled(ms); its header "# this node: copy X GB/s (...); sgemm Y GFLOP/s (...)".
# torch's: "torch <codec> <shape> gbps=X ms=Y" and "# torch copy_gbps=X sgemm_gflops=Y".
{ printf '%s\n' "$ours"; printf '%s\n' "$torch"; } |
awk -v ranks="$ranks" -v threads="$threads" -v tthreads="$torch_threads" -v tprocs="$torch_processes" '
  function blen(n, chunk,   d) {            # largest divisor of n that is <= chunk (n if n <= chunk)
    if (n <= chunk) return n
    for (d = chunk; d > 1; d--) if (n % d == 0) return d
    return 1
  }
  function flops_per_gb(codec, shape,   dims, nd, n, m, i, r) {   # GFLOP/s per GB/s; 0: copy-bound
    nd = split(shape, dims, "x")
    if (codec == "powersgd") {
      if (nd < 2) return 0
      n = dims[1]; m = 1; for (i = 2; i <= nd; i++) m *= dims[i]
      r = 2; if (n < r) r = n; if (m < r) r = m
      return 1.5 * r
    }
    if (codec == "dct_topk") {
      if (nd < 2) return blen(dims[1], 64)
      return blen(dims[nd - 1], 64) + blen(dims[nd], 64)
    }
    return 0
  }
  /^# this node: copy / { s = $0; sub(/^# this node: copy /, "", s); lcopy = s + 0
                          s = $0; sub(/.*; sgemm /, "", s); lgemm = s + 0; next }
  /^# torch copy_gbps=/ { s = $3; sub(/.*=/, "", s); tcopy = s + 0; s = $4; sub(/.*=/, "", s); tgemm = s + 0; next }
  $1 == "torch" && $4 ~ /^gbps=/ { s = $4; sub(/^gbps=/, "", s); T[$2 " " $3] = s + 0; next }
  /^  / && NF >= 11 && $3 != "skipped:" {   # GB/s from in(MB) / time(ms) where that has more digits
    key = $1 " " $2; if (!(key in L)) order[++rows] = key
    L[key] = ($6 >= 1 && $3 >= 1) ? $3 / $6 : $7 + 0; next
  }
  END {
    printf "SUMMARY limits: lowcomm (rank 0 of %d ranks, %d thread(s) each): copy %.2f GB/s, sgemm %.1f GFLOP/s;" \
           " torch (%d process(es), %d thread(s) each): copy %.2f GB/s, sgemm %.1f GFLOP/s\n", ranks, threads, lcopy, lgemm,
           tprocs, tthreads, tcopy, tgemm
    printf "SUMMARY %-9s %-10s %12s %10s %13s %6s %9s %7s\n", "codec", "shape", "lowcomm GB/s", "torch GB/s",
           "lowcomm/torch", "limit", "lowcomm %", "torch %"
    for (i = 1; i <= rows; i++) {
      key = order[i]; split(key, f, " ")
      k = flops_per_gb(f[1], f[2])
      limit = k > 0 ? "sgemm" : "copy"
      lfrac = k > 0 ? (lgemm > 0 ? 100 * k * L[key] / lgemm : 0) : (lcopy > 0 ? 100 * L[key] / lcopy : 0)
      if (key in T) {
        tfrac = k > 0 ? (tgemm > 0 ? 100 * k * T[key] / tgemm : 0) : (tcopy > 0 ? 100 * T[key] / tcopy : 0)
        printf "SUMMARY %-9s %-10s %12.3f %10.3f %12.2fx %6s %8.1f%% %6.1f%%\n", f[1], f[2], L[key], T[key],
               (T[key] > 0 ? L[key] / T[key] : 0), limit, lfrac, tfrac
      } else {
        printf "SUMMARY %-9s %-10s %12.3f %10s %13s %6s %8.1f%% %7s\n", f[1], f[2], L[key], "-", "-", limit, lfrac, "-"
      }
    }
  }'
