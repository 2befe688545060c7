// The string ops' attribute logic, shared by their shape rules
// (lib/IR/Ops/Strings.cpp) and reference kernels (lib/Runtime/Ref/Strings.cpp).
#pragma once
#include "tc/IR/IR.h"
#include <map>
#include <string>
#include <vector>

namespace tc {

// Whether op kind `k` takes str operands; every other op's shape rule is
// preceded by a check that rejects them (checkStringOperands).
bool acceptsStrings(OpKind k);
// Throws "does not take str operands (operand 'X' is str[3])" unless the op
// accepts strings or has no str operand.
void checkStringOperands(const Op &op);

// StringNormalizer: `in` without its stopwords, case-changed; one "" when
// nothing is left. Throws on a bad case_change_action.
std::vector<std::string> normalizeStrings(const Op &op, const std::vector<std::string> &in);

// TfIdfVectorizer's attributes, checked.
struct TfIdfSpec {
  enum class Mode { TF, IDF, TFIDF };
  int64_t minN = 1, maxN = 1, maxSkip = 0;
  Mode mode = Mode::TF;
  int64_t columns = 0; // max(ngram_indexes) + 1
  // Each pool n-gram -> its index k in the pool (column ngramIndexes[k],
  // weight weights[k] or 1). Integer pools fill ints, string pools strs.
  std::map<std::vector<int64_t>, size_t> ints;
  std::map<std::vector<std::string>, size_t> strs;
  std::vector<int64_t> ngramIndexes;
  std::vector<double> weights;
};
TfIdfSpec tfidfSpec(const Op &op);

} // namespace tc
