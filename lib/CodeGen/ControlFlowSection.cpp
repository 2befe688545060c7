#include "tc/CodeGen/ControlFlowSection.h"
#include "tc/IR/ControlFlow.h"
#include "tc/Support/Error.h"
#include <sstream>

namespace tc {

std::string controlFlowLine(const Function &f, const Op &op, const std::string &description) {
  return "@" + f.name + " %" + op.result()->name + " " + description;
}

std::map<const Op *, std::string> deviceControlFlow(const Artifact &a, const Module &m) {
  std::map<const Op *, std::string> out;
  const MemoryBuffer *section = a.section(kSectionControlFlow);
  if (!section)
    return out;
  std::istringstream in{std::string(section->str())};
  for (std::string line; std::getline(in, line);) {
    if (line.empty())
      continue;
    size_t a1 = line.find(' '), a2 = a1 == std::string::npos ? a1 : line.find(' ', a1 + 1);
    const Op *found = nullptr;
    if (a2 != std::string::npos && line[0] == '@' && line[a1 + 1] == '%')
      if (const Function *f = m.lookup(line.substr(1, a1 - 1)))
        for (const auto &op : f->ops)
          if (isControlFlowOp(*op) && !op->results.empty() &&
              op->result()->name == line.substr(a1 + 2, a2 - a1 - 2))
            found = op.get();
    if (!found)
      fail(a.file, ": malformed control-flow line '", line.substr(0, 60), "'");
    out[found] = line.substr(a2 + 1);
  }
  return out;
}

} // namespace tc
