#!/usr/bin/env bash
# Installs everything tc needs to build and test on Debian 12. Idempotent:
# re-running only installs what is missing. libsqlite3-dev: tc-bench's
# history; chromium: the dashboard's browser test (headless); libomp-19-dev:
# OpenMP for clang-19, which builds the fuzzers (utils/fuzz/run-fuzzers.sh).
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo

pkgs=(
  cmake ninja-build ccache g++ python3 binutils
  llvm-19-dev libclang-cpp19-dev libclang-19-dev clang-19 llvm-19-tools libclang-rt-19-dev libomp-19-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libboost-program-options-dev
  libgtest-dev libgmock-dev
  libdnnl-dev
  clang-format-19 libonnx-testdata util-linux
  libsqlite3-dev sqlite3
  chromium
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# lit drives the test suite (psutil: its per-test time limit); the onnx Python package builds test models;
# onnxruntime is the independent oracle the reference executor is checked
# against (test/Runtime); safetensors (Hugging Face's own) wrote the
# checkpoints the safetensors gtests compare with (test/unit/Inputs/make_safetensors.py).
py=${PYTHON:-python3}
$py -c 'import lit, psutil' 2>/dev/null || $py -m pip install -q lit psutil
$py -c 'import onnx, numpy, onnxruntime, safetensors, sklearn' 2>/dev/null || $py -m pip install -q onnx numpy onnxruntime safetensors scikit-learn
echo "install-deps: ok"
