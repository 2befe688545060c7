// THE per-op expression table: each op of a group becomes one C expression
// over register values (`const T tN = ...;`), the same text in both
// dialects. Values are named as they are computed: arguments a<i>, scalar
// constants as literals, op results t<N>; an anchor (a reduction, a
// contraction) is bound by its family.
#pragma once
#include "KernelContext.h"
#include <unordered_set>

namespace tc::kernels {

// An integer Div or Mod whose divisor may be zero (not a constant free of
// zeros), or an integer Pow whose signed exponent may be negative: its
// kernel records a fault (KernelFault.h) instead of dividing by zero.
bool integerDivMayFault(const Op &op);
// Some op of group `f` may record a fault: a CUDA program then defines the
// fault record (kernelPrelude's `faults`).
bool groupMayFault(const Function &f);

class Expressions {
public:
  explicit Expressions(const KernelContext &c) : c_(c) {}

  // The expression of `v`: a computed value, an argument's a<i> or a
  // one-element constant's literal; nullopt for other constants.
  std::optional<std::string> operand(const Value *v);
  // The type `op`'s result is computed in, or nullptr (why set) for an op
  // with several results or a result type no kernel stores.
  const char *resultType(const Op &op);
  // `const T tN = e;` into `os`, naming `res` tN.
  void define(const Value *res, const char *T, const std::string &e, std::ostream &os);
  // Names `v` `name` (an anchor's value computed by its family's loop).
  void bind(const Value *v, const std::string &name) { names_[v] = name; }
  bool computed(const Value *v) const { return names_.count(v) != 0; }
  const std::string &name(const Value *v) const { return names_.at(v); }

  // `op` through the table; false (why set) when it has no code.
  bool emit(const Op &op, std::ostream &os);
  // Some op may record a fault (integer Div, Mod, Pow): its loop cannot be forced to
  // vectorize (x86 has no vector integer division anyway).
  bool mayFault() const { return mayFault_; }
  // The name of the element's linear index in the domain, for ops whose
  // value depends on it (PhiloxDropout's mask): a family that sets it
  // defines the variable in its loops when usesIndex(); without it such an
  // op has no code.
  void setIndex(std::string name) { index_ = std::move(name); }
  bool usesIndex() const { return usesIndex_; }
  const std::string &indexName() const { return index_; }

  // out<i>[at] = each result's value: those computed before a row
  // reduction (in `prologue`) when `inPrologue`, else the others.
  void emitStores(std::ostream &os, const std::string &at,
                  const std::unordered_set<const Value *> &prologue = {},
                  bool inPrologue = false) const;

private:
  // "op index, group tag" of a tc_idiv / tc_imod / tc_ipow call that may
  // record a fault; sets mayFault.
  std::string faultSite(const Op &op);

  const KernelContext &c_;
  std::unordered_map<const Value *, std::string> names_;
  size_t nextTemp_ = 0;
  bool mayFault_ = false;
  std::string index_;
  bool usesIndex_ = false;
};

// Emits every op of the group in order: `anchor` through `anchorCode`
// (which binds or defines its result), every other op through the
// expression table. With `split` the ops before the anchor (a reduction's
// prologue) go to `pro`, the rest to `body`; else all go to `body`. False
// (why set) when an op has no code or a result is not computed.
using AnchorCode = std::function<bool(const Op &anchor, const char *T, std::ostream &os)>;
bool emitGroupOps(const KernelContext &c, Expressions &ex, const Op *anchor, bool split,
                  const AnchorCode &anchorCode, std::ostream &pro, std::ostream &body);

} // namespace tc::kernels
