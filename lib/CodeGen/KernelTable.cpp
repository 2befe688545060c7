#include "tc/CodeGen/KernelTable.h"
#include "tc/Support/Error.h"
#include <sstream>

namespace tc {

std::vector<KernelTableLine> splitKernelTable(std::string_view text) {
  std::vector<KernelTableLine> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    KernelTableLine l{line, {}};
    std::istringstream fields(line);
    for (std::string f; fields >> f;)
      l.fields.push_back(f);
    if (!l.fields.empty())
      lines.push_back(std::move(l));
  }
  return lines;
}

bool parseKernelKindField(std::string_view field, std::string_view symbol,
                          std::optional<KernelKind> &kind) {
  kind = std::nullopt;
  if (symbol == "-")
    return field == "-";
  kind = parseKernelKind(field);
  return kind.has_value();
}

void failKernelTableLine(const std::string &file, std::string_view target,
                         const KernelTableLine &line) {
  fail(file, ": malformed ", target, " kernel table line '", line.text.substr(0, 60), "'");
}

} // namespace tc
