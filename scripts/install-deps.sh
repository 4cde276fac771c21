#!/usr/bin/env bash
# Installs what lowcomm builds and tests with, from Debian's packages (as root). Skips the
# install when everything is already there, so it is cheap to call before every build.
# On a cluster without root, load modules instead (README: "Building on a cluster").
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  openmpi-bin libopenmpi-dev        # MPI
  libhdf5-dev hdf5-tools            # run logs
  libcli11-dev libtomlplusplus-dev libfmt-dev
  nlohmann-json3-dev                # `lowcomm plan`: model shapes from JSON
  libeigen3-dev                     # dense linear algebra in the CPU kernels
  libopenblas-openmp-dev            # sgemm for the transformer kernels, on OpenMP's threads
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev   # preset kokkos (Kokkos 3.4, Serial)
  libgtest-dev libgmock-dev
  clang libclang-rt-14-dev libomp-dev   # preset fuzz: Clang's libFuzzer and OpenMP (scripts/fuzz.sh)
  python3-h5py python3-numpy        # reading logs in tests (/usr/bin/python3)
  python3-pandas python3-matplotlib python3-pytest   # analysis/ (reports) and its tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "lowcomm: missing packages: ${missing[*]}" >&2
  echo "Install them as root (apt-get install ${missing[*]}), or load your site's modules" >&2
  echo "as README.md's 'Building on a cluster' section describes." >&2
  exit 1
fi
echo "lowcomm: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
