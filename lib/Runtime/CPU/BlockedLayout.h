// Which activations a CPU shape plan keeps in oneDNN's blocked layout
// (nChw8c and kin) instead of reordering them to plain NCHW and back around
// every convolution, as onnxruntime keeps NCHWc across a CNN. The layout is
// a fact of the plan, decided once per shape: a value is blocked only when
// every step that writes or reads it computes in that layout (a oneDNN conv
// whose src/dst it is, or an elementwise step over same-shape operands,
// which is correct in any one layout shared by all its full-size operands);
// any other reader or writer (a pool, a reshape, a concat, a graph output)
// keeps it plain, so the reorders sit at the edges of each conv region.
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tc {

// What one step needs of the layouts of the values it touches.
struct LayoutNeeds {
  // Values the step reads or writes in one layout: a blocked layout's name,
  // or "" for plain. Every value the step touches and does not list in
  // `together` or `any` must be here.
  std::vector<std::pair<const Value *, std::string>> fixed;
  // Values computed elementwise together (an elementwise kernel's full-size
  // operands and its result): correct in whichever layout they share.
  std::vector<const Value *> together;
  // Values the step reads in whatever layout they are kept in (global
  // pooling through oneDNN).
  std::vector<const Value *> any;
};

// Value -> blocked layout name, for the values kept blocked: those whose
// class (values joined by `together`) is read and written in one blocked
// layout by everything that touches it, and is neither an argument, a
// constant nor a result of `f`.
std::unordered_map<const Value *, std::string> planBlockedLayouts(const Function &f,
                                                                  const std::vector<LayoutNeeds> &);

// The indices of `group`'s arguments that ops[first..] read at the shape of
// its one result, when those ops are pointwise and every other value they
// read is a scalar: the step is then correct in any layout those arguments
// and its result share. nullopt when an operand broadcasts (per-channel) or
// a full-size constant takes part (its bytes are plain).
std::optional<std::vector<size_t>> elementwiseArgs(const Function &group, size_t first);

} // namespace tc
