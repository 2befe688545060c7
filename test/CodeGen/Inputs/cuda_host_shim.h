// Runs generated CUDA kernels on the host, for tests on machines without a
// GPU: each block's threads are fibers (their own stacks, switched
// cooperatively on one OS thread), __syncthreads a barrier, warp shuffles an
// exchange among the warp's lanes (a barrier of the warp only: warps may
// shuffle different numbers of times, as on a GPU, where a warp with no work
// skips its shuffles), blocks one after another (so __shared__ arrays can be
// function statics). Fibers, not OS threads: a barrier is a switch, not a
// futex round trip through the kernel, which made the tensor-core kernels'
// shuffle-heavy bodies minutes slow on two cores. Between barriers the
// threads run in thread order, and in reverse order in the next phase, so a
// read of another thread's write with no barrier between them sees the
// poisoned value in one of the two (shared memory is poisoned, below). A
// barrier some threads never reach is reported, not a hang. Slow and only
// for small tensors, but it runs the very source NVRTC compiles.
#pragma once
#include "tc/Support/Float16.h"
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <sys/mman.h>
#include <vector>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

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

// A fiber: one thread of the running block.
struct tc_fiber {
  void *sp = nullptr; // saved stack pointer while switched out (x86-64)
#if !defined(__x86_64__)
  ucontext_t context;
#endif
  unsigned tid = 0;
  bool done = false, waiting = false;
};
// Of the threads [first, first + expected) (a block's or a warp's): arrived
// ones wait until the last arrives. No allocation: a barrier is hot.
struct tc_fiber_barrier {
  unsigned first, expected, arrived = 0;
};
// The block being run, on this OS thread.
struct tc_block_state {
  tc_fiber_barrier *barrier;
  std::vector<tc_fiber_barrier> *warps; // one per warp, of its lanes
  uint64_t exchange[1024];              // a shuffled value's bytes (at most 8: pointers too)
  std::vector<tc_fiber> fibers;
  tc_fiber *current = nullptr;
  void *schedulerSp = nullptr;
#if !defined(__x86_64__)
  ucontext_t scheduler;
#endif
  void (*run)(const void *) = nullptr; // the kernel on its parameters
  const void *args = nullptr;
};
inline thread_local tc_block_state *tc_block;

#if defined(__x86_64__)
// Saves the callee-saved registers on the current stack and its pointer in
// *from, then resumes the stack at `to` (the SysV ABI's callee-saved set; no
// signal mask or FPU state: kernels change neither). Assembly of its own,
// not an inline function: the compiler must treat the call as opaque and
// reload what another fiber may have written (shared memory) after it.
extern "C" void tc_fiber_switch(void **from, void *to);
asm(".pushsection .text\n.weak tc_fiber_switch\n.hidden tc_fiber_switch\n"
    ".type tc_fiber_switch, @function\ntc_fiber_switch:\n"
    "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
    "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
    "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\nret\n"
    ".size tc_fiber_switch, .-tc_fiber_switch\n.popsection\n");
#endif
// From the running fiber back to the block's scheduler.
inline void tc_fiber_yield() {
  tc_block_state &s = *tc_block;
#if defined(__x86_64__)
  tc_fiber_switch(&s.current->sp, s.schedulerSp);
#else
  swapcontext(&s.current->context, &s.scheduler);
#endif
}
inline void tc_fiber_entry() {
  tc_block_state &s = *tc_block;
  s.run(s.args);
  s.current->done = true;
  tc_fiber_yield(); // never resumed
  __builtin_unreachable();
}
inline void tc_arrive_and_wait(tc_fiber_barrier &b) {
  if (++b.arrived == b.expected) {
    b.arrived = 0;
    for (unsigned t = b.first; t < b.first + b.expected; ++t)
      tc_block->fibers[t].waiting = false;
    return;
  }
  tc_block->current->waiting = true;
  tc_fiber_yield();
}

inline void __syncthreads() { tc_arrive_and_wait(*tc_block->barrier); }
// Lane `from`'s v (every lane of the warp must call it: a barrier of the warp).
template <class T> T tc_exchange(T v, unsigned from) {
  static_assert(sizeof(T) <= sizeof(uint64_t));
  tc_fiber_barrier &warp = (*tc_block->warps)[threadIdx.x / 32];
  std::memcpy(&tc_block->exchange[threadIdx.x], &v, sizeof v);
  tc_arrive_and_wait(warp);
  T r;
  std::memcpy(&r, &tc_block->exchange[from], sizeof r);
  tc_arrive_and_wait(warp);
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
inline void __threadfence() {}
template <class T> T __ldcg(const T *at) { return *at; }
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

// Each fiber's stack: 8 MiB reserved (an OS thread's default; pages are
// committed as touched) above a guard page, so an overflow faults instead of
// writing over the next fiber's stack; kept for the next launch on this OS
// thread.
inline constexpr size_t kFiberStack = size_t(8) << 20, kFiberGuard = 4096;
inline char *tc_fiber_stack(unsigned t) {
  static thread_local std::vector<char *> stacks;
  while (stacks.size() <= t) {
    void *m = mmap(nullptr, kFiberGuard + kFiberStack, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED || mprotect(m, kFiberGuard, PROT_NONE) != 0) {
      std::fprintf(stderr, "cuda_host_shim: no memory for a fiber's stack\n");
      std::exit(4);
    }
    stacks.push_back(static_cast<char *>(m) + kFiberGuard);
  }
  return stacks[t] + kFiberStack; // the top: stacks grow down
}

template <class P> void tc_launch(void (*kernel)(P), const P &p, unsigned grid, unsigned block) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  struct Call {
    void (*kernel)(P);
    const P *p;
  } call{kernel, &p};
  for (unsigned b = 0; b < grid; ++b) {
    tc_fiber_barrier barrier{0, block};
    std::vector<tc_fiber_barrier> warps;
    for (unsigned w = 0; w * 32 < block; ++w)
      warps.push_back({w * 32, std::min(32u, block - w * 32)});
    tc_block_state state{&barrier, &warps, {}};
    state.run = [](const void *c) {
      const Call &k = *static_cast<const Call *>(c);
      k.kernel(*k.p);
    };
    state.args = &call;
    state.fibers.resize(block);
    tc_block_state *outer = tc_block;
    tc_block = &state;
    tc_poison_shared();
    for (unsigned t = 0; t < block; ++t) {
      tc_fiber &f = state.fibers[t];
      f.tid = t;
      char *top = tc_fiber_stack(t);
#if defined(__x86_64__)
      // What tc_fiber_switch pops: six registers, then tc_fiber_entry as the
      // return address, above it a null "return address" of the entry, so
      // the entry starts with the ABI's alignment (rsp + 8 a multiple of 16).
      void **sp = reinterpret_cast<void **>(top) - 8;
      std::fill(sp, sp + 8, nullptr);
      sp[6] = reinterpret_cast<void *>(&tc_fiber_entry);
      f.sp = sp;
#else
      getcontext(&f.context);
      f.context.uc_stack.ss_sp = top - kFiberStack;
      f.context.uc_stack.ss_size = kFiberStack;
      f.context.uc_link = nullptr;
      makecontext(&f.context, tc_fiber_entry, 0);
#endif
    }
    blockIdx = {b, 0, 0};
    unsigned live = block;
    for (bool forward = true; live; forward = !forward) {
      bool ran = false;
      for (unsigned i = 0; i < block; ++i) {
        tc_fiber &f = state.fibers[forward ? i : block - 1 - i];
        if (f.done || f.waiting)
          continue;
        state.current = &f;
        threadIdx = {f.tid, 0, 0};
#if defined(__x86_64__)
        tc_fiber_switch(&state.schedulerSp, f.sp);
#else
        swapcontext(&state.scheduler, &f.context);
#endif
        ran = true;
        live -= f.done;
      }
      if (!ran) {
        std::fprintf(stderr,
                     "cuda_host_shim: block %u of %u: %u of its %u threads wait at a barrier "
                     "the others never reach (a hang on a GPU)\n",
                     b, grid, live, block);
        std::exit(4);
      }
    }
    tc_block = outer;
  }
}
// The launch of `kernel` whose parameter is at `p` (cuLaunchKernel's
// kernelParams[0]: a multi-tensor kernel's differs from its `_params`).
template <class P> void tc_launch_bytes(void (*kernel)(P), void *p, unsigned grid, unsigned block) {
  tc_launch(kernel, *static_cast<const P *>(p), grid, block);
}
