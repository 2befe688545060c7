// A line of the artifact's text sections (shape plan, tuning) or of a
// tuning cache: fields separated by tabs, so a field may hold spaces.
#pragma once
#include <string_view>
#include <vector>

namespace tc {

inline std::vector<std::string_view> tabFields(std::string_view line) {
  std::vector<std::string_view> f;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string_view::npos; start = tab + 1)
    f.push_back(line.substr(start, tab - start));
  f.push_back(line.substr(start));
  return f;
}

} // namespace tc
