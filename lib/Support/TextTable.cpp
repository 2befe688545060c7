#include "tc/Support/TextTable.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tc {

namespace {

bool numeric(const std::string &s) {
  if (s == "-")
    return true;
  char *end = nullptr;
  std::strtod(s.c_str(), &end);
  // "12.5", "3.1x", "45%": a number with at most a one-character unit
  return !s.empty() && end != s.c_str() && size_t(end - s.c_str()) + 1 >= s.size();
}

} // namespace

std::string TextTable::text(const std::string &indent) const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string> &r) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  };
  measure(header_);
  for (const auto &r : rows_)
    measure(r);
  // A column whose cells are all numbers is right-aligned, header included.
  std::vector<bool> right(width.size(), !rows_.empty());
  for (const auto &r : rows_)
    for (size_t i = 0; i < width.size(); ++i)
      right[i] = right[i] && (i >= r.size() || r[i].empty() || numeric(r[i]));
  std::string out;
  auto line = [&](const std::vector<std::string> &r) {
    std::string l = indent;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      std::string pad(width[i] - cell.size(), ' ');
      bool last = i + 1 == width.size();
      l += right[i] ? pad + cell : cell + (last ? "" : pad);
      if (!last)
        l += "  ";
    }
    while (!l.empty() && l.back() == ' ')
      l.pop_back();
    out += l + "\n";
  };
  line(header_);
  for (const auto &r : rows_)
    line(r);
  return out;
}

std::string TextTable::csv() const {
  std::string out;
  auto line = [&](const std::vector<std::string> &r) {
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string &c = r[i];
      if (i)
        out += ',';
      if (c.find_first_of(",\"\n") == std::string::npos) {
        out += c;
        continue;
      }
      out += '"';
      for (char ch : c)
        out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      out += '"';
    }
    out += "\n";
  };
  line(header_);
  for (const auto &r : rows_)
    line(r);
  return out;
}

std::string fixed(double v, int digits) {
  if (v < 0)
    return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

} // namespace tc
