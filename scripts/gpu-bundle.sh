#!/usr/bin/env bash
# Packs the CUDA build (preset cuda, already built here) with the shared libraries it needs that a
# bare GPU machine lacks, for scripts/gpu-check.sh --prebuilt on a machine that can neither install
# Debian's packages nor reach a package mirror (a lent GPU node with only CUDA on it).
#
# What goes in, as gpu-bundle/bundle.tar.xz:
#   build/cuda      the executables, CTest's files and what tests read (object files left out);
#   runtime/usr/... Open MPI's and PMIx's trees as Debian installs them (launcher, plugins, help
#                   texts), found at run time through OPAL_PREFIX and PMIX_INSTALL_PREFIX;
#   runtime/lib     every shared library those programs and plugins load, except the C library,
#                   the C++ runtime (the GPU machine's is newer), the driver and CUDA's own
#                   libraries (cuBLAS, the runtime and NCCL are the GPU machine's, same major).
# The programs must run on a newer glibc than this machine's (Debian 12: 2.36), which holds for
# the Ubuntu 24.04 CUDA images.
#
# Usage: scripts/gpu-bundle.sh   (after: cmake --preset cuda && cmake --build --preset cuda ...)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/cuda/CMakeCache.txt ] || { echo "gpu-bundle: build/cuda is missing; configure and build preset cuda first" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
runtime=$stage/runtime
multiarch=/usr/lib/x86_64-linux-gnu
mkdir -p "$runtime/lib" "$runtime/usr/bin" "$runtime$multiarch" "$runtime/usr/share"

# Open MPI 4.1 and PMIx as Debian lays them out, so that the prefix variables relocate them whole.
cp -a /usr/bin/orterun /usr/bin/orted "$runtime/usr/bin/"
cp -a "$multiarch/openmpi" "$multiarch/pmix2" "$runtime$multiarch/"
cp -a /usr/share/openmpi "$runtime/usr/share/"
[ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$runtime/usr/share/"

# The ELF files whose libraries must travel: this build's executables and libraries, and the
# launcher's programs and plugins.
mapfile -t elves < <( { find build/cuda -type f -perm -u+x -not -path '*/CMakeFiles/*';
                        find build/cuda -type f -name '*.so*' -not -path '*/CMakeFiles/*';
                        find "$runtime" -type f \( -perm -u+x -o -name '*.so*' \); } |
                      sort -u | while read -r f; do file -b "$f" | grep -q '^ELF' && echo "$f"; done)
left_out='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libnvidia-|libcudart\.so|libcublas|libcublasLt|libnccl\.so|libcufft)'
missing=$(for f in "${elves[@]}"; do ldd "$f" 2>/dev/null; done | grep 'not found' | sort -u || true)
[ -z "$missing" ] || { echo "gpu-bundle: libraries not found here:" >&2; echo "$missing" >&2; exit 1; }
for f in "${elves[@]}"; do ldd "$f" 2>/dev/null; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $left_out ]] && continue
    [ -e "$runtime/lib/$name" ] || cp -L "$path" "$runtime/lib/$name"
  done

mkdir -p gpu-bundle
# One archive, both trees at their places relative to the repository root and to runtime/.
# Left out: object files, CMake's own files, and what earlier test runs wrote (tests/train/runs and
# other runs/ folders, logs and checkpoints), which can be gigabytes.
tar -cJf gpu-bundle/bundle.tar.xz --exclude='*.o' --exclude='*.a' --exclude=CMakeFiles --exclude=runs \
    --exclude=Testing --exclude='*.h5' build/cuda -C "$stage" runtime
echo "gpu-bundle: gpu-bundle/bundle.tar.xz, $(du -h gpu-bundle/bundle.tar.xz | cut -f1)" \
     "($(ls "$runtime/lib" | wc -l) libraries; built from $(grep '^CMAKE_HOME_DIRECTORY' build/cuda/CMakeCache.txt | cut -d= -f2))"
