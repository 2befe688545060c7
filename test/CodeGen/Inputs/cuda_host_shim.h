// Runs generated CUDA kernels on the host, for tests on machines without a
// GPU: each block's threads are std::threads, __syncthreads a barrier, warp
// shuffles an exchange among the warp's lanes (a barrier of the warp only:
// warps may shuffle different numbers of times, as on a GPU, where a warp
// with no work skips its shuffles), blocks one after another (so
// __shared__ arrays can be function statics). Slow and only for small
// tensors, but it runs the very source NVRTC compiles.
#pragma once
#include "tc/Support/Float16.h"
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <deque>
#include <math.h>
#include <thread>
#include <vector>

struct tc_dim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local tc_dim3 threadIdx, blockIdx;
inline tc_dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
// In one section, filled with 0xff bytes (NaN as floats and halves) before
// every block: a kernel reading shared memory it never wrote fails here as
// it would on a GPU, not on a function static's zeros.
#define __shared__ static __attribute__((section("tc_shared")))
extern "C" char __start_tc_shared[] __attribute__((weak)), __stop_tc_shared[] __attribute__((weak));
inline void tc_poison_shared() {
  if (__start_tc_shared)
    std::memset(__start_tc_shared, 0xff, size_t(__stop_tc_shared - __start_tc_shared));
}

struct tc_block_state {
  std::barrier<> *barrier;
  std::deque<std::barrier<>> *warps; // one per warp, of its lanes
  uint64_t exchange[1024];           // a shuffled value's bytes (at most 8: pointers too)
};
inline tc_block_state *tc_block;

inline void __syncthreads() { tc_block->barrier->arrive_and_wait(); }
// Lane `from`'s v (every lane of the warp must call it: a barrier of the warp).
template <class T> T tc_exchange(T v, unsigned from) {
  static_assert(sizeof(T) <= sizeof(uint64_t));
  std::barrier<> &warp = (*tc_block->warps)[threadIdx.x / 32];
  std::memcpy(&tc_block->exchange[threadIdx.x], &v, sizeof v);
  warp.arrive_and_wait();
  T r;
  std::memcpy(&r, &tc_block->exchange[from], sizeof r);
  warp.arrive_and_wait();
  return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int lane) {
  return tc_exchange(v, threadIdx.x ^ unsigned(lane));
}
template <class T> T __shfl_sync(unsigned, T v, int src) {
  return tc_exchange(v, (threadIdx.x & ~31u) | (unsigned(src) & 31u));
}
// A GPU's __trap aborts the kernel (the launch fails at the next
// synchronize); here it is counted and returns, so kernels follow it with
// `continue` or `return` (see tc_traps).
inline std::atomic<int> tc_traps{0};
// Blocks run one after another: a block's writes are visible to the next.
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned atomicAdd(unsigned *at, unsigned v) {
  return __atomic_fetch_add(at, v, __ATOMIC_SEQ_CST);
}
inline unsigned long long atomicCAS(unsigned long long *at, unsigned long long expect,
                                    unsigned long long v) {
  __atomic_compare_exchange_n(at, &expect, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expect;
}
inline void __trap() { ++tc_traps; }
inline double __longlong_as_double(long long x) {
  double d;
  std::memcpy(&d, &x, sizeof d);
  return d;
}

struct __half {
  uint16_t bits;
};
struct __nv_bfloat16 {
  uint16_t bits;
};
inline float __half2float(__half h) { return tc::halfToFloat(h.bits); }
inline __half __float2half_rn(float f) { return {tc::floatToHalf(f)}; }
inline float __bfloat162float(__nv_bfloat16 b) { return tc::bf16ToFloat(b.bits); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return {tc::floatToBf16(f)}; }
inline __half __ushort_as_half(unsigned short x) { return {x}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) { return {x}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.bits; }

template <class P> void tc_launch(void (*kernel)(P), const P &p, unsigned grid, unsigned block) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    std::barrier<> barrier(block);
    std::deque<std::barrier<>> warps;
    for (unsigned w = 0; w * 32 < block; ++w)
      warps.emplace_back(std::min<std::ptrdiff_t>(32, block - w * 32));
    tc_block_state state{&barrier, &warps, {}};
    tc_block = &state;
    tc_poison_shared();
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, t, b] {
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        kernel(p);
      });
    for (std::thread &t : threads)
      t.join();
  }
}
// The launch of `kernel` whose parameter is at `p` (cuLaunchKernel's
// kernelParams[0]: a multi-tensor kernel's differs from its `_params`).
template <class P> void tc_launch_bytes(void (*kernel)(P), void *p, unsigned grid, unsigned block) {
  tc_launch(kernel, *static_cast<const P *>(p), grid, block);
}
