#include "tc/Analysis/ModelSummary.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/TextLexer.h"
#include <algorithm>
#include <set>
#include <sstream>

namespace tc {

ModelSummary summarize(const Module &m) {
  ModelSummary s;
  s.name = m.name;
  s.metadata = m.metadata;
  const Function &f = m.main();
  std::set<std::string> syms;
  auto noteSyms = [&](const TensorType &t) {
    for (const Dim &d : t.shape)
      if (d.isSymbolic()) // a plain symbol or an expression of some
        exprOf(d).symbols(syms);
  };
  for (const Value *a : f.args) {
    s.inputs.emplace_back(a->name, a->type.str());
    noteSyms(a->type);
  }
  for (const Value *r : f.results) {
    s.outputs.emplace_back(r->name, r->type.str());
    noteSyms(r->type);
  }
  s.symbols.assign(syms.begin(), syms.end());
  for (const auto &op : f.ops) {
    ++s.opsByKind[std::string(op->name())];
    ++s.opsByCategory[std::string(fusionCategoryName(op->info().category))];
  }
  s.numOps = f.ops.size();
  s.numConstants = f.constants.size();
  for (const Value *c : f.constants) {
    s.parameters += staticNumElements(c->type.shape).value_or(0);
    s.weightBytes += c->data->size;
  }
  return s;
}

std::string ModelSummary::text() const {
  std::ostringstream os;
  os << "model: " << name << "\n";
  for (const auto &[k, v] : metadata)
    os << "  " << k << ": " << v << "\n";
  os << "inputs:\n";
  for (const auto &[n, t] : inputs)
    os << "  " << n << ": " << t << "\n";
  os << "outputs:\n";
  for (const auto &[n, t] : outputs)
    os << "  " << n << ": " << t << "\n";
  if (!symbols.empty()) {
    os << "symbolic dims:";
    for (const auto &sym : symbols)
      os << " " << sym;
    os << "\n";
  }
  os << "ops: " << numOps << "\n";
  std::vector<std::pair<size_t, std::string>> kinds;
  for (const auto &[k, n] : opsByKind)
    kinds.emplace_back(n, k);
  std::stable_sort(kinds.begin(), kinds.end(), [](auto &a, auto &b) { return a.first > b.first; });
  for (const auto &[n, k] : kinds)
    os << "  " << k << ": " << n << "\n";
  os << "by fusion category:";
  for (const auto &[c, n] : opsByCategory)
    os << " " << c << "=" << n;
  os << "\n";
  os << "constants: " << numConstants << " (" << parameters << " elements, " << weightBytes
     << " bytes)\n";
  return os.str();
}

std::string ModelSummary::json() const {
  std::ostringstream os;
  auto pairs = [&](const auto &xs) {
    os << "[";
    bool first = true;
    for (const auto &[n, t] : xs) {
      os << (first ? "" : ", ") << "{\"name\": " << quoteString(n)
         << ", \"type\": " << quoteString(t) << "}";
      first = false;
    }
    os << "]";
  };
  auto counts = [&](const auto &xs) {
    os << "{";
    bool first = true;
    for (const auto &[k, n] : xs) {
      os << (first ? "" : ", ") << quoteString(k) << ": " << n;
      first = false;
    }
    os << "}";
  };
  os << "{\"name\": " << quoteString(name) << ", \"inputs\": ";
  pairs(inputs);
  os << ", \"outputs\": ";
  pairs(outputs);
  os << ", \"ops\": " << numOps << ", \"ops_by_kind\": ";
  counts(opsByKind);
  os << ", \"ops_by_category\": ";
  counts(opsByCategory);
  os << ", \"constants\": " << numConstants << ", \"parameters\": " << parameters
     << ", \"weight_bytes\": " << weightBytes << "}\n";
  return os.str();
}

} // namespace tc
