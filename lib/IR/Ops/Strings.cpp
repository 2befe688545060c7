// Shape rules of the string ops, and the check that keeps str operands away
// from every op that does not take them.
#include "OpInference.h"
#include "tc/IR/StringMath.h"
#include <algorithm>
#include <cctype>

namespace tc {

bool acceptsStrings(OpKind k) {
  switch (k) {
  case OpKind::Fused: // its callee's ops are checked one by one
  case OpKind::Identity:
  case OpKind::Reshape:
  case OpKind::Flatten:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Concat:
  case OpKind::Gather:
  case OpKind::Slice:
  case OpKind::Shape:
  case OpKind::Size:
  case OpKind::Cast:
  case OpKind::CastLike:
  case OpKind::StringNormalizer:
  case OpKind::TfIdfVectorizer: return true;
  default: return false;
  }
}

void checkStringOperands(const Op &op) {
  if (acceptsStrings(op.kind))
    return;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Value *v = op.operands[i];
    if (v && v->type.dtype == DType::Str) {
      const auto &specs = op.info().operands;
      std::string name = i < specs.size() ? std::string(specs[i].name) : std::to_string(i);
      fail("does not take str operands (operand '", name, "' is ", v->type.str(), ")");
    }
  }
}

namespace {

std::string lowerAscii(std::string s) {
  for (char &c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string upperAscii(std::string s) {
  for (char &c : s)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

const std::string &caseAction(const Op &op) {
  const std::string &a = op.getString("case_change_action");
  if (a != "NONE" && a != "LOWER" && a != "UPPER")
    fail("case_change_action must be LOWER, UPPER or NONE, got \"", a, "\"");
  return a;
}

} // namespace

std::vector<std::string> normalizeStrings(const Op &op, const std::vector<std::string> &in) {
  const std::string &action = caseAction(op);
  bool sensitive = op.getInt("is_case_sensitive") != 0;
  std::vector<std::string> stops = op.attr("stopwords").strings();
  if (!sensitive)
    for (std::string &s : stops)
      s = lowerAscii(s);
  std::vector<std::string> out;
  for (const std::string &s : in) {
    if (std::find(stops.begin(), stops.end(), sensitive ? s : lowerAscii(s)) != stops.end())
      continue;
    out.push_back(action == "LOWER" ? lowerAscii(s) : action == "UPPER" ? upperAscii(s) : s);
  }
  if (out.empty())
    out.emplace_back();
  return out;
}

TfIdfSpec tfidfSpec(const Op &op) {
  TfIdfSpec s;
  s.minN = op.getInt("min_gram_length");
  s.maxN = op.getInt("max_gram_length");
  s.maxSkip = op.getInt("max_skip_count");
  if (s.minN < 1 || s.maxN < s.minN)
    fail("need 1 <= min_gram_length <= max_gram_length, got ", s.minN, " and ", s.maxN);
  if (s.maxSkip < 0)
    fail("max_skip_count must be >= 0, got ", s.maxSkip);
  const std::string &mode = op.getString("mode");
  if (mode == "TF")
    s.mode = TfIdfSpec::Mode::TF;
  else if (mode == "IDF")
    s.mode = TfIdfSpec::Mode::IDF;
  else if (mode == "TFIDF")
    s.mode = TfIdfSpec::Mode::TFIDF;
  else
    fail("mode must be TF, IDF or TFIDF, got \"", mode, "\"");
  const std::vector<int64_t> &counts = op.getInts("ngram_counts");
  const std::vector<int64_t> &poolInts = op.getInts("pool_int64s");
  const std::vector<std::string> &poolStrs = op.attr("pool_strings").strings();
  if (!poolInts.empty() && !poolStrs.empty())
    fail("give pool_int64s or pool_strings, not both");
  size_t poolSize = std::max(poolInts.size(), poolStrs.size());
  s.ngramIndexes = op.getInts("ngram_indexes");
  s.weights = op.attr("weights").floats();
  // ngram_counts[i]: where the (i+1)-grams start in the pool.
  size_t k = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : int64_t(poolSize);
    size_t n = i + 1;
    if (begin < 0 || end < begin || size_t(end) > poolSize || size_t(end - begin) % n)
      fail("ngram_counts ", i, " (", begin, ") does not split the pool of ", poolSize,
           " items into ", n, "-grams");
    for (size_t p = size_t(begin); p < size_t(end); p += n, ++k) {
      if (!poolInts.empty())
        s.ints.emplace(std::vector<int64_t>(poolInts.begin() + ptrdiff_t(p),
                                            poolInts.begin() + ptrdiff_t(p + n)),
                       k);
      else
        s.strs.emplace(std::vector<std::string>(poolStrs.begin() + ptrdiff_t(p),
                                                poolStrs.begin() + ptrdiff_t(p + n)),
                       k);
    }
  }
  if (s.ngramIndexes.size() != k)
    fail("ngram_indexes has ", s.ngramIndexes.size(), " entries for the ", k, " pool n-grams");
  if (!s.weights.empty() && s.weights.size() != k)
    fail("weights has ", s.weights.size(), " entries for the ", k, " pool n-grams");
  for (int64_t c : s.ngramIndexes) {
    if (c < 0 || c >= (int64_t(1) << 32))
      fail("ngram_indexes entry ", c, " is out of range");
    s.columns = std::max(s.columns, c + 1);
  }
  return s;
}

namespace infer {

std::vector<TensorType> inferStringNormalizer(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if (x.dtype != DType::Str || x.rank() < 1 || x.rank() > 2)
    fail("X must be a str [C] or [1, C] tensor, got ", x.str());
  if (x.rank() == 2 && x.shape[0].isStatic() && x.shape[0].size != 1)
    fail("a 2-D X must have one row, got ", x.str());
  caseAction(op);
  if (x.rank() == 1)
    return {TensorType{DType::Str, {Dim::unknown()}}};
  return {TensorType{DType::Str, {Dim::fixed(1), Dim::unknown()}}};
}

std::vector<TensorType> inferTfIdfVectorizer(const Op &op) {
  const TensorType &x = operandType(op, 0);
  if ((x.dtype != DType::I32 && x.dtype != DType::I64 && x.dtype != DType::Str) || x.rank() < 1 ||
      x.rank() > 2)
    fail("X must be an i32, i64 or str [C] or [N, C] tensor, got ", x.str());
  TfIdfSpec s = tfidfSpec(op);
  if (x.dtype == DType::Str ? !s.ints.empty() : !s.strs.empty())
    fail("X is ", x.str(), " but the pool holds ", s.ints.empty() ? "strings" : "integers");
  Shape out{Dim::fixed(s.columns)};
  if (x.rank() == 2)
    out.insert(out.begin(), x.shape[0]);
  return {TensorType{DType::F32, out}};
}

} // namespace infer

} // namespace tc
