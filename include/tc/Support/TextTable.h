// Rows of cells printed as an aligned text table (numbers right-aligned) or
// as CSV: tc-prof's tables in both spellings from one description.
#pragma once
#include <string>
#include <vector>

namespace tc {

class TextTable {
public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  // Columns padded to their widest cell; a column whose cells all parse as
  // numbers (or "-", or a number with a one-character unit: "12%") is
  // right-aligned. Lines start with `indent`.
  std::string text(const std::string &indent = "") const;
  // RFC 4180: cells with a comma, quote or newline are quoted.
  std::string csv() const;

private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point with `digits` decimals ("1.25"); "-" for a negative value
// (meaning "not known").
std::string fixed(double v, int digits);

} // namespace tc
