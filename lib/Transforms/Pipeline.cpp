// Pipelines: passes with typed option values, built in code or parsed from
// --passes= text, and the named pipelines the tools run.
#include "tc/Support/Error.h"
#include "tc/Transforms/Pass.h"
#include <algorithm>
#include <cctype>

namespace tc {

namespace {

const PassOptionSpec *findOption(const PassInfo &p, std::string_view name) {
  for (const PassOptionSpec &o : p.options)
    if (o.name == name)
      return &o;
  return nullptr;
}

std::string_view kindName(PassOptionKind k) {
  switch (k) {
  case PassOptionKind::Int: return "an integer";
  case PassOptionKind::Bool: return "0 or 1";
  case PassOptionKind::String: return "a string";
  }
  return "?";
}

// The value `text` spells for option `o`; nullopt when it is not of o's kind.
std::optional<PassOptionValue> parseValue(const PassOptionSpec &o, std::string_view text) {
  switch (o.kind) {
  case PassOptionKind::Int: {
    std::string s(text);
    try {
      size_t used = 0;
      int64_t x = std::stoll(s, &used);
      if (used == s.size())
        return x;
    } catch (const std::exception &) {
    }
    return std::nullopt;
  }
  case PassOptionKind::Bool:
    if (text == "1" || text == "true")
      return true;
    if (text == "0" || text == "false")
      return false;
    return std::nullopt;
  case PassOptionKind::String: return std::string(text);
  }
  return std::nullopt;
}

std::string spell(const PassOptionValue &v) {
  if (const int64_t *i = std::get_if<int64_t>(&v))
    return std::to_string(*i);
  if (const bool *b = std::get_if<bool>(&v))
    return *b ? "1" : "0";
  return std::get<std::string>(v);
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

} // namespace

PassInvocation::PassInvocation(const PassInfo &p) : pass(&p) {
  for (const PassOptionSpec &o : p.options)
    setText(o.name, o.defaultValue);
}

PassInvocation &PassInvocation::set(std::string_view option, PassOptionValue v) {
  const PassOptionSpec *o = findOption(*pass, option);
  if (!o)
    fail("pass '", pass->name, "' has no option '", option, "'");
  if (v.index() != size_t(o->kind))
    fail("pass '", pass->name, "': option '", option, "' takes ", kindName(o->kind));
  options.values[o->name] = std::move(v);
  return *this;
}

PassInvocation &PassInvocation::setText(std::string_view option, std::string_view text) {
  const PassOptionSpec *o = findOption(*pass, option);
  if (!o)
    fail("pass '", pass->name, "' has no option '", option, "'");
  std::optional<PassOptionValue> v = parseValue(*o, text);
  if (!v)
    fail("pass '", pass->name, "': option '", option, "' takes ", kindName(o->kind), ", not '",
         text, "'");
  return set(option, std::move(*v));
}

std::string PassInvocation::spelling() const {
  std::string s = pass->name;
  bool first = true;
  for (const PassOptionSpec &o : pass->options) {
    const PassOptionValue &v = options.values.at(o.name);
    if (v == parseValue(o, o.defaultValue))
      continue;
    s += (first ? "{" : ",") + o.name + "=" + spell(v);
    first = false;
  }
  return first ? s : s + "}";
}

Pipeline::Pipeline(std::initializer_list<PassId> ids) {
  for (PassId id : ids)
    add(id);
}

Pipeline &Pipeline::add(PassInvocation p) {
  passes_.push_back(std::move(p));
  return *this;
}

Pipeline &Pipeline::append(const Pipeline &more) {
  passes_.insert(passes_.end(), more.passes_.begin(), more.passes_.end());
  return *this;
}

Pipeline &Pipeline::insertBefore(PassId anchor, const Pipeline &passes) {
  auto at = std::find_if(passes_.begin(), passes_.end(),
                         [&](const PassInvocation &p) { return p.is(anchor); });
  passes_.insert(at, passes.passes_.begin(), passes.passes_.end());
  return *this;
}

PassId Pipeline::preFusionAnchor() const {
  bool lowers = std::any_of(passes_.begin(), passes_.end(),
                            [](const PassInvocation &p) { return p.is(PassId::LowerQuantize); });
  return lowers ? PassId::LowerQuantize : PassId::Fuse;
}

size_t Pipeline::setOption(PassId id, std::string_view option, std::string_view text) {
  size_t n = 0;
  for (PassInvocation &p : passes_)
    if (p.is(id)) {
      p.setText(option, text);
      ++n;
    }
  return n;
}

std::string Pipeline::spelling() const {
  std::string s;
  for (const PassInvocation &p : passes_)
    s += (s.empty() ? "" : ",") + p.spelling();
  return s;
}

Pipeline parsePipeline(std::string_view text) {
  Pipeline out;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && isNameChar(text[i]))
      ++i;
    std::string name(text.substr(start, i - start));
    const PassInfo *p = lookupPass(name);
    if (!p)
      fail("unknown pass '", name, "' (see --list-passes)");
    PassInvocation inv(*p);
    if (i < text.size() && text[i] == '{') {
      size_t close = text.find('}', i);
      if (close == std::string_view::npos)
        fail("pass '", name, "': missing '}' in options");
      std::string_view body = text.substr(i + 1, close - i - 1);
      while (!body.empty()) {
        size_t comma = body.find(',');
        std::string_view kv = body.substr(0, comma);
        size_t eq = kv.find('=');
        if (eq == std::string_view::npos)
          fail("pass '", name, "': option '", kv, "' needs a value (k=v)");
        inv.setText(kv.substr(0, eq), kv.substr(eq + 1));
        body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
      }
      i = close + 1;
    }
    out.add(std::move(inv));
    if (i < text.size()) {
      if (text[i] != ',')
        fail("bad pass list near '", text.substr(i), "'");
      ++i;
    }
  }
  return out;
}

Pipeline pipelineForLevel(int level, std::optional<bool> attention) {
  using enum PassId;
  // -O0 runs op by op: the eager baseline.
  if (level <= 0)
    return {Verify};
  // lower-losses after CSE: the weighted mean's second class compare stays
  // its own op, so that fusion gives it to the denominator's reduction.
  // lower-recurrent before fold-constants, which folds the slices and
  // reshapes of the weights it makes.
  Pipeline p{InferShapes, LowerEinsum, LowerRecurrent, FoldConstants,   Canonicalize,
             CSE,         LowerLosses, LowerHardmax,   LowerOptimizers, DCE};
  // -O3 adds attention-fusion; -O2 where attentionFusionAtO2 says (Pass.h,
  // docs/optimizer.md has the numbers).
  if (level >= 2 && attention.value_or(level >= 3))
    p.add(AttentionFusion).add(AttentionProjections).add(AttentionLayouts).add(DCE);
  // lower-quantize last before fusion: tc-opt puts the target's passes and
  // mixed-precision before it (preFusionAnchor), which must not turn its
  // exact f32 / f64 arithmetic into half types.
  p.add(LowerQuantize).add(DCE);
  // rematerialize after the last CSE (which would merge its clones back
  // into the forward), right before fusion places them.
  if (level >= 2)
    p.add(Rematerialize).add(Fuse);
  return p;
}

Pipeline channelsLastPipeline() {
  using enum PassId;
  // conv-gemms after channels-last (its 1x1 convs are NHWC by then: no
  // transposes) and before align-gemms (which pads the GEMMs it makes too)
  // and canonicalize (which folds a layer scale into their weights).
  // gemm-views after align-gemms and before canonicalize, which take plain
  // MatMuls only (a transposed B is no [K, N] weight).
  // attention-grad-gemms first: the GEMMs it makes meet align-gemms and
  // gemm-views like any. attention-layouts again last: an attention over a
  // conv stage reads its channels-last output in place (the Transposes
  // channels-last put between them are views it follows).
  return {AttentionGradGemms, PatchConvs,        ChannelsLast, ConvGemms,        AlignGemms,
          GemmViews,          SymmetricConvPads, Canonicalize, AttentionLayouts, DCE};
}

Pipeline mixedPrecisionPipeline(const std::string &type, bool lowIO) {
  using enum PassId;
  Pipeline p;
  p.add(PassInvocation(MixedPrecision).set("type", type).set("io", lowIO ? "low" : "f32"));
  return p.add(Canonicalize).add(DCE);
}

namespace {
// "kind:k=v,k2=v2" as options of `id`, the kind as option `kindOption`.
PassInvocation fromSpec(PassId id, const char *kindOption, const std::string &spec) {
  PassInvocation inv(id);
  size_t colon = spec.find(':');
  inv.set(kindOption, spec.substr(0, colon));
  if (colon == std::string::npos)
    return inv;
  std::string rest = spec.substr(colon + 1);
  for (size_t at = 0; at <= rest.size();) {
    size_t comma = std::min(rest.find(',', at), rest.size());
    std::string kv = rest.substr(at, comma - at);
    size_t eq = kv.find('=');
    if (eq == std::string::npos)
      fail("'", spec, "': '", kv, "' is not option=value");
    inv.setText(kv.substr(0, eq), kv.substr(eq + 1));
    at = comma + 1;
  }
  return inv;
}
} // namespace

Pipeline trainingPipeline(const std::string &loss, const std::string &optimizer,
                          const std::string &trainable, const std::string &freeze,
                          const std::string &lowType, const std::string &lossScale) {
  using enum PassId;
  Pipeline p;
  p.add(PassInvocation(TrainState).set("trainable", trainable).set("freeze", freeze));
  // Shape computations folded (the weights are arguments by now, so nothing
  // reading one folds): a Resize's sizes or a Slice's ends computed from
  // shapes that --dim fixed reach the gradient rules as constants.
  // Recurrent ops unrolled before autodiff, which differentiates the steps.
  p.add(InferShapes).add(FoldConstants).add(LowerRecurrent);
  // Attention fused before autodiff, each op giving its rows' log-sum-exp:
  // its rule's AttentionGrad recomputes the probabilities from it, so no
  // [B, H, Sq, Skv] tensor lives from the forward to the backward.
  // Batch norms stay ops through autodiff (their rule: two sums a norm, where
  // the decomposed statistics' generic rules make four), then are lowered
  // into the same statistics ops the rule recomputes, which CSE merges.
  p.add(PassInvocation(Canonicalize).set("lower-training-batch-norms", false))
      .add(PassInvocation(AttentionFusion).set("lse", true))
      .add(DCE);
  p.add(fromSpec(AppendLoss, "loss", loss))
      .add(PassInvocation(Autodiff).set("loss-scale", lossScale))
      .add(Canonicalize)
      .add(CSE);
  if (!lowType.empty())
    p.append(mixedPrecisionPipeline(lowType));
  if (!optimizer.empty())
    p.add(fromSpec(AppendOptimizer, "optimizer", optimizer));
  if (!optimizer.empty() && !lowType.empty())
    p.add(WeightShadows);
  return p.add(Canonicalize).add(CSE).add(DCE);
}

Pipeline evalPipeline(const std::string &loss, const std::string &trainable,
                      const std::string &freeze, const std::string &lowType) {
  using enum PassId;
  Pipeline p;
  p.add(PassInvocation(TrainState)
            .set("trainable", trainable)
            .set("freeze", freeze)
            .set("eval", true));
  p.add(fromSpec(AppendLoss, "loss", loss));
  if (!lowType.empty())
    p.append(mixedPrecisionPipeline(lowType));
  return p.add(Canonicalize).add(CSE).add(DCE);
}

Pipeline outlineLoneOpsPipeline(bool moves) {
  Pipeline p;
  return p.add(PassId::LowerLosses)
      .add(PassId::LowerHardmax)
      .add(PassId::LowerOptimizers)
      .add(PassId::LowerCollectives)
      .add(PassId::LowerQuantize)
      .add(PassInvocation(PassId::Fuse).set("singles", true).set("moves", moves))
      .add(PassInvocation(PassId::ExpandIntoGathers));
}

} // namespace tc
