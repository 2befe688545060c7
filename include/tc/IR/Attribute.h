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
  Attribute(double f) : v_(f) {}
  Attribute(std::string s) : v_(std::move(s)) {}
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attribute(std::vector<double> v) : v_(std::move(v)) {}
  Attribute(std::vector<std::string> v) : v_(std::move(v)) {}
  Attribute(DType t) : v_(t) {}

  AttrKind kind() const { return AttrKind(v_.index()); }
  int64_t i() const { return std::get<int64_t>(v_); }
  double f() const { return std::get<double>(v_); }
  const std::string &s() const { return std::get<std::string>(v_); }
  const std::vector<int64_t> &ints() const { return std::get<std::vector<int64_t>>(v_); }
  const std::vector<double> &floats() const { return std::get<std::vector<double>>(v_); }
  const std::vector<std::string> &strings() const { return std::get<std::vector<std::string>>(v_); }
  DType type() const { return std::get<DType>(v_); }

  bool operator==(const Attribute &o) const;
  // Canonical text spelling; parseAttribute(str(), kind()) gives it back exactly.
  std::string str() const;

private:
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
