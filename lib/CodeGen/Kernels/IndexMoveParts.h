// What the index moves (IndexMove.cpp, Resize.cpp, Windows.cpp,
// GridSample.cpp, RoiAlign.cpp, Det.cpp, Spectral.cpp, RuntimeAxesReduce.cpp, UnaryEinsum.cpp)
// share: the op's code under construction, in three parts put together by emitLoop.
#pragma once
#include "KernelContext.h"
#include <map>
#include <sstream>

namespace tc::kernels {

struct MoveCode {
  MoveCode(const KernelContext &c, const Op &op);

  const KernelContext &c;
  const Op &op;
  const Value *x, *y; // operand 0 (may be null) and the result
  size_t r;           // the result's rank
  // The result's element type: an integer of its size for moves, its
  // storage type once computed() (arithmetic on the values).
  const char *T;
  bool ok = true;
  std::ostringstream setup, body; // per call; per element (coordinates c0.. and i)

  // Arithmetic on the values: float types only, T becomes the storage type.
  bool computed(bool integers = false); // integers: the op computes them exactly
  // "c<d>": the result coordinate of axis d.
  std::string cs(size_t d) const { return "c" + std::to_string(d); }
  // Operand k's elements (an argument's pointer or a constant's array).
  std::string data(size_t k) { return dataOf(op.operand(k)); }
  std::string dataOf(const Value *v); // operand or not (indices through an Expand)
  // Argument `v`'s elements in its own storage type (read with c.load),
  // whatever the result's: OneHot's float indices, Range's bounds.
  std::string stored(const Value *v);
  // A one-element operand as a `double` (Range's start and delta, read once
  // a call): a constant's literal or the argument's element.
  std::string scalar(const Value *v);
  // An index fault (CPU: recorded, CUDA: a trap) for value `a` outside an
  // axis of size `D`, then `continue`: the element is skipped.
  std::string indexFault(const std::string &a, const std::string &D) const;
  // The attribute `axis` normalized for v's rank (SIZE_MAX: out of range).
  size_t axis(const Value *v);
  // Declares int64_t `name` = index operand v at `pos`, negative counted
  // from D; out of range: a CUDA trap, a recorded fault on the CPU
  // (tc/CodeGen/KernelFault.h) and the element skipped.
  void index(const std::string &name, const Value *v, const std::string &pos, const std::string &D,
             const std::string &indent = "    ") {
    index(body, name, v, pos, D, indent);
  }
  void index(std::ostream &os, const std::string &name, const Value *v, const std::string &pos,
             const std::string &D, const std::string &indent);
  // Index operand v's elements as they are stored (an argument's pointer
  // typed int64_t/int, or a constant's array).
  std::string indices(const Value *v);
  // A loaded value in the compute type, and a compute-type value stored.
  std::string load(const std::string &ref) const;
  std::string store(const std::string &value) const;
  // Scatters: startCombine reads the reduction attribute; `v` starts as the
  // data's element at `at` (initial), combine(update) folds one update in as
  // the reduction says, finish(at) writes it to the result.
  bool startCombine();
  std::string initial(const std::string &at);
  // `v` = the result's element at `at` (a scatter resuming its own partial result).
  std::string resume(const std::string &at) const;
  std::string combine(const std::string &update) const;
  std::string finish(const std::string &at) const;
  // Scatters by update slices (IndexMove.cpp's emitScatterND): code run
  // after the result got a copy of `copied` (the data's array). CPU: after
  // the chunk's elements [tid, n) are copied, instead of `body`'s loop.
  // CUDA: a `split` launch of two passes; pass 0 copies where `setup`'s
  // `byUpdates` holds and runs `body`'s loop elsewhere, pass 1 runs
  // `updates` where it holds.
  std::ostringstream updates;
  std::string copied;
  // CUDA: a loop over the elements that replaces `body`'s grid-stride one
  // (each block's threads at its barriers together; `n`, `stride` and
  // `setup` as for `body`).
  std::ostringstream blockLoop;
  // Declares the result coordinates c0 .. c<r-1> of flat index `flat`.
  void coordinates(std::ostream &os, const std::string &flat, const std::string &indent) const;
  // The kernel's body after its signature.
  void emitLoop(std::ostream &os, const std::string &symbol);

private:
  bool compute_ = false;
  int reduction_ = 0;                      // none, add, mul, max, min
  std::map<size_t, std::string> pointers_; // argument index -> element type
  std::ostringstream arrays_;              // constant operands' arrays
  std::map<const Value *, std::string> names_;
};

// `v` as the bits of a `t` element, spelled as a `T` (a moved type).
std::string fillBits(double v, DType t, const char *T);

// nn::cubicKernel(t, a) for t >= 0 as a double expression (Resize's and
// GridSample's cubic taps).
std::string cubicKernelCode(const std::string &t, const std::string &a);

bool emitResize(MoveCode &m);
bool emitWindow(MoveCode &m);            // Windows.cpp
bool emitMelWeightMatrix(MoveCode &m);   // Windows.cpp
bool emitGridSample(MoveCode &m);        // GridSample.cpp
bool emitRoiAlign(MoveCode &m);          // RoiAlign.cpp
bool emitDet(MoveCode &m);               // Det.cpp
bool emitDFT(MoveCode &m);               // Spectral.cpp
bool emitSTFT(MoveCode &m);              // Spectral.cpp
bool emitRuntimeAxesReduce(MoveCode &m); // RuntimeAxesReduce.cpp
bool emitUnaryEinsum(MoveCode &m);       // UnaryEinsum.cpp

} // namespace tc::kernels
