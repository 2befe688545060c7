// Typed attribute access checked against the op table at compile time:
//
//   int64_t t = attr<OpKind::Gemm, "transA">(op);
//   const std::vector<int64_t> &k = attr<OpKind::MaxPool, "kernel_shape">(op);
//
// The value type follows the kind Ops.def declares; a name the op does not
// declare fails to compile (a misspelled op.getInt("transa") only fails when
// it runs). Like Op::attr, an absent attribute reads the table's default.
// `op` may be any op declaring the attribute with the same kind (the pools
// share kernel_shape); anything else throws tc::Error as Op::attr does.
#pragma once
#include "tc/IR/IR.h"
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace tc {

namespace attrs_detail {

struct AttrDecl {
  std::string_view name;
  AttrKind kind;
};

// An attribute name as a template argument.
template <size_t N> struct Name {
  char chars[N];
  constexpr Name(const char (&s)[N]) { std::copy_n(s, N, chars); }
  constexpr std::string_view view() const { return {chars, N - 1}; }
};

constexpr std::optional<AttrKind> find(std::initializer_list<AttrDecl> attrs,
                                       std::string_view name) {
  for (const AttrDecl &a : attrs)
    if (a.name == name)
      return a.kind;
  return std::nullopt;
}

// The kind Ops.def declares attribute `name` of op `k` with; nullopt: none.
constexpr std::optional<AttrKind> declaredKind(OpKind k, std::string_view name) {
#define ATTR(n, K, def, doc)                                                                       \
  AttrDecl { n, AttrKind::K }
#define REQ(n, K, doc)                                                                             \
  AttrDecl { n, AttrKind::K }
#define ATTRS(...) {__VA_ARGS__}
#define TC_OP(E, CAT, PREC, LIB, FLOPS, NRES, INFER, SUMMARY, OPS, ATTRS_)                         \
  case OpKind::E: return find(ATTRS_, name);
  switch (k) {
#include "tc/IR/Ops.def"
  case OpKind::NumOps: break;
  }
#undef TC_OP
#undef ATTRS
#undef REQ
#undef ATTR
  return std::nullopt;
}

} // namespace attrs_detail

template <OpKind K, attrs_detail::Name N> decltype(auto) attr(const Op &op) {
  constexpr std::optional<AttrKind> kind = attrs_detail::declaredKind(K, N.view());
  static_assert(kind.has_value(), "Ops.def declares no attribute of this name for this op");
  const Attribute &a = op.attr(N.view());
  if constexpr (*kind == AttrKind::Int)
    return a.i();
  else if constexpr (*kind == AttrKind::Float)
    return a.f();
  else if constexpr (*kind == AttrKind::String)
    return a.s();
  else if constexpr (*kind == AttrKind::Ints)
    return a.ints();
  else if constexpr (*kind == AttrKind::Floats)
    return a.floats();
  else if constexpr (*kind == AttrKind::Strings)
    return a.strings();
  else
    return a.type();
}

} // namespace tc
