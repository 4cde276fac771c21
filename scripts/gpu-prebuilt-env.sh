# Sourced by scripts/gpu-check.sh --prebuilt, from the repository root: unpacks the bundle that
# scripts/gpu-bundle.sh made (build/cuda here, the MPI runtime and libraries under /tmp) and sets
# the environment that lets them run on a GPU machine without Debian's packages.
bundle=gpu-bundle/bundle.tar.xz
[ -f "$bundle" ] || { echo "gpu-check: $bundle is missing; make it with scripts/gpu-bundle.sh" >&2; exit 2; }
# build/cuda is replaced, so only one that an earlier unpacking left (the marker) may be there: a
# build made on this machine is never thrown away.
if [ -e build/cuda ] && [ ! -e build/cuda/.from-gpu-bundle ]; then
  echo "gpu-check: build/cuda is a build of this machine; --prebuilt would replace it with the bundle's." >&2
  echo "Run --prebuilt on the GPU machine, or move build/cuda away first." >&2
  exit 2
fi
unpacked=/tmp/lowcomm-gpu-bundle
rm -rf "$unpacked" build/cuda
mkdir -p "$unpacked" build
tar -xJf "$bundle" -C "$unpacked"
mv "$unpacked/build/cuda" build/cuda
touch build/cuda/.from-gpu-bundle
runtime=$unpacked/runtime

# CTest's files name the source and build trees by the absolute paths of the machine that built
# them, and the launcher and CMake by theirs: make those paths lead here.
built_in=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/cuda/CMakeCache.txt)
if [ "$built_in" != "$PWD" ] && [ ! -e "$built_in" ]; then
  mkdir -p "$(dirname "$built_in")" && ln -s "$PWD" "$built_in"
fi
link_if_absent() { [ -e "$2" ] || ln -s "$1" "$2"; }
link_if_absent "$runtime/usr/bin/orterun" /usr/bin/mpiexec
link_if_absent "$(command -v cmake)" /usr/bin/cmake
link_if_absent "$(command -v ctest)" /usr/bin/ctest

# Open MPI relocated to the bundle (OPAL_PREFIX); PMIx's plugins named by their folder, since no
# variable relocates Debian's PMIx and a GPU machine may have another PMIx's plugins at the same
# path (seen on the H200 image: one of them failed to load); Debian's MCA defaults (/etc/openmpi)
# as variables.
export OPAL_PREFIX=$runtime/usr
export PMIX_MCA_mca_base_component_path=$runtime/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
export PATH=$runtime/usr/bin:$PATH
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_mtl='^ofi' OMPI_MCA_btl='^uct,openib,ofi'
export OMPI_MCA_pml='^ucx' OMPI_MCA_osc='^ucx,pt2pt' OMPI_MCA_btl_vader_single_copy_mechanism=none

# CUDA's libraries are this machine's; NCCL may live beside CUDA or in a Python package.
nccl=$(find /usr/local/cuda/lib64/ /usr/lib/x86_64-linux-gnu/ /opt /usr/local/lib -name 'libnccl.so.2*' \
            2>/dev/null | head -1 || true)
export LD_LIBRARY_PATH=$runtime/lib:$runtime/usr/lib/x86_64-linux-gnu/openmpi/lib:/usr/local/cuda/lib64${nccl:+:$(dirname "$nccl")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "# prebuilt bundle: $(build/cuda/apps/lowcomm/lowcomm info | head -1), built in $built_in; NCCL from ${nccl:-nowhere}"
if ldd build/cuda/apps/lowcomm/lowcomm | grep 'not found'; then
  echo "gpu-check: the bundle's programs miss the libraries above on this machine" >&2
fi
