#!/usr/bin/env bash
# Installs or checks everything warplens needs to build and test, from Debian's packages
# (libamdhip64-dev: HIP headers, so CI build-tests the timer API's HIP backend; openjdk-17-jdk-headless:
# javac/jar for the Java binding and its JNI headers, java and jfr to read the JFR exports back;
# pkgconf: the install test builds a program with warplens.pc; python3-venv, python3-pandas: the
# Python package is installed into a venv and read sessions as DataFrames in the tests; zsh: the
# generated zsh completion is checked with zsh -n).
# Packages already present are not touched, so the script works offline on a prepared machine.
# The CUDA 13.0 toolkit (nvcc, CUPTI headers and libcupti) is not a Debian package: it is checked,
# and its absence is reported with what to install.
set -euo pipefail

need=(cmake make gcc g++ libsqlite3-dev sqlite3 jq protobuf-compiler python3 clang libclang-rt-14-dev libamdhip64-dev
      openjdk-17-jdk-headless pkgconf python3-venv python3-pandas zsh)
if [ "${WARPLENS_DEPS_BROWSER:-1}" = 1 ]; then
    need+=(chromium)
fi
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cupti.h" ] || [ ! -x "$cuda/bin/nvcc" ]; then
    echo "deps: the CUDA toolkit (13.0, with CUPTI) was not found at $cuda;" \
         "install NVIDIA's cuda-toolkit-13-0 package or set CUDA_HOME" >&2
    exit 1
fi
export PATH="$cuda/bin:$PATH"
echo "deps: ok (cmake $(cmake --version | head -1 | awk '{print $3}'), $(nvcc --version | tail -1 | awk '{print $2}'))"
