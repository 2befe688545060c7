// cuda_host_shim.h itself (cuda-host-shim.test): barriers, shuffles, and
// that it catches what a GPU would get wrong. argv[1] picks the kernel.
#include "cuda_host_shim.h"
#include <cstdio>
#include <string>

struct Params {
  float *out;
  int mode;
};
// Each thread writes its slot of shared memory and reads both neighbours':
// mode 0 with __syncthreads between, mode 1 without (a race on a GPU).
__global__ void neighbours(Params p) {
  __shared__ float s[128];
  unsigned t = threadIdx.x, n = blockDim.x;
  s[t] = float(t + 1);
  if (p.mode == 0)
    __syncthreads();
  p.out[blockIdx.x * n + t] = s[(t + 1) % n] + s[(t + n - 1) % n];
}
// A warp's sum by xor shuffles, then a barrier that thread 0 skips in mode 3
// (it returns first: the others wait forever on a GPU).
__global__ void warpSum(Params p) {
  unsigned t = threadIdx.x;
  float v = float(t);
  for (int o = 16; o; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if (p.mode == 3 && t == 0)
    return;
  __syncthreads();
  p.out[t] = v;
}

// A thread whose locals outgrow its stack (16 MiB of 8): the guard page
// below the stack faults, rather than the writes landing in another
// thread's stack.
__global__ void deep(Params p) {
  volatile char big[16 << 20];
  for (size_t i = 0; i < sizeof big; i += 4096)
    big[sizeof big - 1 - i] = char(i);
  p.out[threadIdx.x] = big[0];
}

int main(int argc, char **argv) {
  std::string what = argc > 1 ? argv[1] : "";
  std::vector<float> out(2 * 128, 0);
  if (what == "barrier" || what == "race") {
    tc_launch(neighbours, Params{out.data(), what == "race"}, 2, 128);
    int bad = 0;
    for (unsigned i = 0; i < out.size(); ++i) {
      unsigned t = i % 128;
      bad += out[i] != float((t + 1) % 128 + 1) + float((t + 127) % 128 + 1);
    }
    std::printf("%s: %d of %zu wrong\n", what.c_str(), bad, out.size());
  } else if (what == "shuffle" || what == "hang") {
    tc_launch(warpSum, Params{out.data(), what == "hang" ? 3 : 2}, 1, 64);
    std::printf("%s: warp sums %g %g\n", what.c_str(), out[5], out[40]);
  } else if (what == "deep") {
    tc_launch(deep, Params{out.data(), 0}, 1, 2);
    std::printf("deep: no fault\n");
  }
  return 0;
}
