# GPU call 2 (utils/gpu-session/split-kit.sh): unpack part 2 (boost, oneDNN, onnx, protobuf, sqlite,
# z3, the LLVM headers, libonnx-testdata) and build the tools from this tree into /tmp/build.
set -e
K=/tmp/kit; T0=$(date +%s)
[ -f $K/.p1-done ] || { echo "fresh machine: /tmp/kit missing, run call 1 again"; exit 3; }
for d in .kit/p2/*.deb; do dpkg -x $d $K; done
tar -xJf .kit/p2/llvm-dev.tar.xz -C $K
ln -sf ../../x86_64-linux-gnu/libLLVM.so.19.1 $K/usr/lib/llvm-19/lib/libLLVM.so.19.1
find $K/usr/lib -name '*.cmake' -exec sed -i 's/message(FATAL_ERROR "The imported target/message(STATUS "The imported target/' {} +
rm -rf /tmp/kit2 && mkdir -p /tmp/kit2 && cp -a $K/usr /tmp/kit2/
rm -rf /tmp/kit2/usr/include/boost /tmp/kit2/usr/lib/x86_64-linux-gnu/cmake/[Bb]oost* /tmp/kit2/usr/lib/x86_64-linux-gnu/libboost*
cp -a --update=none /tmp/kit2/usr/. /usr/ 2>/dev/null || cp -an /tmp/kit2/usr/. /usr/
ldconfig
export LD_LIBRARY_PATH=$K/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cmake -S . -B /tmp/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTC_BUILD_TESTS=OFF -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm \
  -DBoost_DIR=$K/usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0 -DCMAKE_PREFIX_PATH=$K/usr \
  -DCMAKE_CXX_FLAGS="-isystem $K/usr/include" > /tmp/cmake.log 2>&1 || { tail -30 /tmp/cmake.log; exit 1; }
ninja -C /tmp/build -j16 > /tmp/ninja.log 2>&1 || { grep -B2 -A8 "error\|FAILED" /tmp/ninja.log | head -60; exit 1; }
echo "built $(ls /tmp/build/bin | tr '\n' ' ') in $(( $(date +%s)-T0 )) s"
cp .kit/p2/sha /tmp/build/sha 2>/dev/null || true  # jobs.sh reads it in later calls (.kit/p2 travels with this call only)
