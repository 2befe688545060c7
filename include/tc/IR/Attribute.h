// Op attributes: typed values attached to an op by name.
#pragma once
#include "tc/IR/Types.h"
#include <string>
#include <variant>
#include <vector>

namespace tc {

enum class AttrKind : uint8_t { Int, Float, String, Ints, Floats, Strings, Type };

std::string_view attrKindName(AttrKind k);

class Attribute {
public:
  using Storage = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, DType>;
  Attribute() : v_(int64_t(0)) {}
  Attribute(int64_t i) : v_(i) {}
  Attribute(int i) : v_(int64_t(i)) {}
  Attribute(double f) : v_(f) {}
  Attribute(std::string s) : v_(std::move(s)) {}
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attribute(std::vector<double> v) : v_(std::move(v)) {}
  Attribute(std::vector<std::string> v) : v_(std::move(v)) {}
  Attribute(DType t) : v_(t) {}

  AttrKind kind() const { return AttrKind(v_.index()); }
  // Typed access; a kind mismatch throws tc::Error (never bad_variant_access).
  int64_t i() const { return get<int64_t>(AttrKind::Int); }
  double f() const { return get<double>(AttrKind::Float); }
  const std::string &s() const { return get<std::string>(AttrKind::String); }
  const std::vector<int64_t> &ints() const { return get<std::vector<int64_t>>(AttrKind::Ints); }
  const std::vector<double> &floats() const { return get<std::vector<double>>(AttrKind::Floats); }
  const std::vector<std::string> &strings() const {
    return get<std::vector<std::string>>(AttrKind::Strings);
  }
  DType type() const { return get<DType>(AttrKind::Type); }

  bool operator==(const Attribute &o) const;
  // Canonical text spelling; parseAttribute(str(), kind()) gives it back exactly.
  std::string str() const;

private:
  template <typename T> const T &get(AttrKind want) const {
    if (const T *p = std::get_if<T>(&v_))
      return *p;
    kindMismatch(want);
  }
  [[noreturn]] void kindMismatch(AttrKind want) const;
  Storage v_;
};

// Parses the text spelling of an attribute of the given kind (used by the
// .tcir parser and for defaults in the op table). Throws tc::Error.
Attribute parseAttribute(std::string_view text, AttrKind kind);

// Shortest decimal spelling of a double that reads back to the same bits,
// always with a '.' or exponent so it never reads as an integer; nan/inf
// spelled `nan`, `inf`, `-inf`.
std::string formatDouble(double d);

} // namespace tc
