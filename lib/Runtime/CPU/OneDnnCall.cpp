#include "OneDnnCall.h"
#include "tc/IR/MatMulViews.h"
#include <cmath>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

namespace tc {

using dnnl::memory;
using Dims = memory::dims;

namespace {
// One CPU engine for every call (each call keeps its own stream).
const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}
} // namespace

struct OneDnnCall::Impl {
  dnnl::engine engine = cpuEngine();
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args; // by DNNL_ARG_*
  // Where each argument's data comes from on a run.
  struct Binding {
    memory m;
    int operand;           // index into the Fused op's operands; -1: the result
    void *bound = nullptr; // the buffer m has now (arena buffers repeat every run)
  };
  std::vector<Binding> bindings;
  // The bindings that handed a run's buffer to `from` hand it to `to`.
  void retarget(const memory &from, const memory &to) {
    for (Binding &b : bindings)
      if (b.m.get() == from.get())
        b.m = to, b.bound = nullptr;
  }
  // `args` as the C API takes them, made at the first run (the C++
  // execute() builds this vector from the map on every call).
  std::vector<dnnl_exec_arg_t> execArgs;
  // Activations in the layout the primitive picked (blocked), reordered in
  // from and out to the user's plain layout on each run.
  std::optional<memory> userSrc, userDst;
  // The reorders those layouts need, built once: weights in (a run's when
  // they are not constant), activations in and out.
  std::optional<dnnl::reorder> weightsIn, srcIn, dstOut;
  // Weights in a layout the user's bytes are not in: reordered once when
  // constant, else on every run.
  memory userWeights, weights;
  int weightsOperand = -1;
  bool weightsConstant = false;
  // A reduction over spatial axes only, rebuilt by readSrcLike.
  std::optional<dnnl::algorithm> reduction;
  memory::desc reducedDst;
};

// A padding-free layout's name ("nChw8c", "nhwc": dims outer to inner by
// stride, upper case where a block of them is inner), "" for the plain
// row-major one or one the arena's plain-sized buffer cannot hold.
static std::string layoutName(const memory::desc &md) {
  const dnnl_memory_desc_t &d = md.data;
  if (d.format_kind != dnnl_blocked || d.offset0 != 0 || d.ndims < 3 || d.ndims > 5)
    return "";
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  size_t n = size_t(d.ndims), elements = 1;
  for (size_t i = 0; i < n; ++i) {
    if (d.padded_dims[i] != d.dims[i])
      return "";
    elements *= size_t(d.dims[i]);
  }
  if (md.get_size() != elements * sizeof(float))
    return "";
  const char *letters = n == 3 ? "ncw" : n == 4 ? "nchw" : "ncdhw";
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return b.strides[x] > b.strides[y]; });
  std::string name;
  for (size_t i : order) {
    bool blocked = false;
    for (int k = 0; k < b.inner_nblks; ++k)
      blocked |= size_t(b.inner_idxs[k]) == i;
    name += blocked ? char(letters[i] - 'a' + 'A') : letters[i];
  }
  for (int k = 0; k < b.inner_nblks; ++k)
    name += std::to_string(b.inner_blks[k]) + letters[b.inner_idxs[k]];
  return name == std::string(letters) ? "" : name; // plain: nothing to keep
}

OneDnnCall::~OneDnnCall() = default;

void OneDnnCall::setThreads(unsigned n) { omp_set_num_threads(int(n)); }

namespace {
// oneDNN sizes a primitive's thread team from omp_get_max_threads(), both
// when the primitive is made (brgconv splits its work for that many) and when
// it runs (one thread: the caller runs it, no parallel region). A serial call
// holds it at 1 for both, and gives the run's --threads back after.
// What describe() adds for a serial call.
constexpr const char *kOnOneThread = " on 1 thread";

class OneThread {
public:
  explicit OneThread(bool on) : saved_(on ? omp_get_max_threads() : 0) {
    if (saved_)
      omp_set_num_threads(1);
  }
  ~OneThread() {
    if (saved_)
      omp_set_num_threads(saved_);
  }
  OneThread(const OneThread &) = delete;
  OneThread &operator=(const OneThread &) = delete;

private:
  int saved_;
};
} // namespace

namespace {

struct Reject {
  std::string why;
};

Dims dimsOf(const Value &v) { return staticDims(v.type.shape); }

Dims denseStrides(const Dims &d) {
  Dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;)
    s[i - 1] = s[i] * d[i];
  return s;
}

memory::desc plain(const Dims &d) {
  return memory::desc(d, memory::data_type::f32, denseStrides(d));
}

// `d` right-aligned to `rank` dims with leading 1s (numpy broadcasting).
Dims padTo(Dims d, size_t rank) {
  d.insert(d.begin(), rank - d.size(), 1);
  return d;
}

std::vector<int64_t> intsOr(const Op &op, const char *name, size_t n, int64_t fill) {
  std::vector<int64_t> v = op.getInts(name);
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

// A group value's place: the Fused operand it is, or a constant's bytes.
struct Source {
  int operand = -1;
  const Value *constant = nullptr;
  const Value *type = nullptr; // the static type (the Fused operand's for arguments)
  // Whether its bytes are known when the call is built (the group's own
  // constant, or a constant the Fused op passes in).
  bool fixed(const Op &fused) const {
    return constant || fused.operand(size_t(operand))->isConstant();
  }
};

std::optional<dnnl::algorithm> reductionOf(const Op &op) {
  using A = dnnl::algorithm;
  switch (op.kind) {
  case OpKind::ReduceSum: return A::reduction_sum;
  case OpKind::ReduceMean:
  case OpKind::GlobalAveragePool: return A::reduction_mean;
  case OpKind::ReduceMax:
  case OpKind::GlobalMaxPool: return A::reduction_max;
  case OpKind::ReduceMin: return A::reduction_min;
  case OpKind::ReduceProd: return A::reduction_mul;
  default: return std::nullopt;
  }
}

// The axes a Reduce*/Global*Pool reduces, non-negative and sorted.
std::vector<int64_t> reducedAxes(const Op &op, size_t rank) {
  std::vector<int64_t> axes;
  if (op.is(OpKind::GlobalAveragePool) || op.is(OpKind::GlobalMaxPool)) {
    for (size_t a = 2; a < rank; ++a)
      axes.push_back(int64_t(a));
    return axes;
  }
  if (const Value *v = op.operand(1)) {
    if (!v->isConstant() || v->type.dtype != DType::I64)
      throw Reject{"axes known only at run time"};
    axes.assign(v->data->as<int64_t>(), v->data->as<int64_t>() + v->data->size / 8);
  } else {
    axes = op.getInts("axes");
  }
  if (axes.empty()) {
    if (const Attribute *noop = op.findAttr("noop_with_empty_axes"); noop && noop->i())
      throw Reject{"noop_with_empty_axes"};
    for (size_t a = 0; a < rank; ++a)
      axes.push_back(int64_t(a));
  }
  for (int64_t &a : axes)
    a = a < 0 ? a + int64_t(rank) : a;
  return axes;
}

// A reorder from `from` to `to`, through the C API: the C++ execute() builds
// a hash map of its two arguments on every call.
void reorderNow(const dnnl::reorder &r, const dnnl::stream &stream, const memory &from,
                const memory &to) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}};
  dnnl::error::wrap_c_api(dnnl_primitive_execute(r.get(), stream.get(), 2, args),
                          "could not execute a reorder");
}

// Whether `md` puts every element where the plain row-major layout does
// (nhwc or nChw8c of [N,C,1,1] do). Checked element by element: small dsts.
bool plainBytes(const memory::desc &md) {
  Dims dims = md.dims();
  if (md == plain(dims))
    return true;
  const dnnl_memory_desc_t &d = md.data;
  int64_t total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (d.padded_dims[i] != dims[i])
      return false;
    total *= dims[i];
  }
  if (d.format_kind != dnnl_blocked || d.offset0 != 0 || total > (int64_t(1) << 20))
    return false;
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  Dims blockOf(dims.size(), 1), idx(dims.size(), 0);
  for (int k = 0; k < b.inner_nblks; ++k)
    blockOf[size_t(b.inner_idxs[k])] *= b.inner_blks[k];
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t at = 0, inner = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      at += idx[i] / blockOf[i] * b.strides[i];
    Dims rest = blockOf; // blocks are outer to inner
    for (int k = 0; k < b.inner_nblks; ++k) {
      size_t i = size_t(b.inner_idxs[k]);
      rest[i] /= b.inner_blks[k];
      inner = inner * b.inner_blks[k] + idx[i] / rest[i] % b.inner_blks[k];
    }
    if (at + inner != flat)
      return false;
    for (size_t i = dims.size(); i-- > 0 && ++idx[i] == dims[i];)
      idx[i] = 0;
  }
  return true;
}

} // namespace

std::unique_ptr<OneDnnCall> OneDnnCall::create(const Function &group, const Op &fused,
                                               std::string &why, bool serial) {
  // Some primitives lack some post-ops: then the epilogue kernel takes them.
  if (auto call = build(group, fused, /*fold=*/true, serial, why))
    return call;
  return group.ops.size() > 1 && why.rfind("oneDNN", 0) == 0
             ? build(group, fused, false, serial, why)
             : nullptr;
}

std::unique_ptr<OneDnnCall> OneDnnCall::poolReading(const Function &group, const Op &fused,
                                                    const OneDnnCall &producer, bool serial) {
  if (group.ops.size() != 1 || producer.dstLayout_.empty() || !producer.impl_->userDst ||
      !(group.ops[0]->is(OpKind::MaxPool) || group.ops[0]->is(OpKind::AveragePool)))
    return nullptr;
  std::string why;
  return build(group, fused, true, serial, why, &producer);
}

std::unique_ptr<OneDnnCall> OneDnnCall::build(const Function &group, const Op &fused, bool fold,
                                              bool serial, std::string &why,
                                              const OneDnnCall *srcFrom) {
  OneThread team(serial);
  std::unique_ptr<OneDnnCall> call(new OneDnnCall());
  call->serial_ = serial;
  call->impl_ = std::make_unique<Impl>();
  Impl &impl = *call->impl_;
  std::unordered_map<const Value *, Source> sources;
  for (size_t i = 0; i < group.args.size(); ++i)
    sources[group.args[i]] = {int(i), nullptr, fused.operand(i)};
  for (const Value *c : group.constants)
    sources[c] = {-1, c, c};
  // Argument `arg` of the primitive reads group value `v` in layout `md`.
  auto bind = [&](const Value *v, int arg, const memory::desc &md) {
    const Source &s = sources.at(v);
    memory m(md, impl.engine, DNNL_MEMORY_NONE);
    if (s.constant)
      m.set_data_handle(const_cast<uint8_t *>(s.constant->data->ptr));
    else
      impl.bindings.push_back({m, s.operand});
    impl.args[arg] = m;
  };
  try {
    for (const Value *v : fused.operands)
      if (!v || v->type.dtype != DType::F32)
        throw Reject{"an operand that is not f32"};
    const Op &anchor = *group.ops.front();
    const Value &result = *fused.result();
    Dims dst = dimsOf(result);

    // The epilogue: an Add of a per-output-channel vector straight after an
    // anchor without a bias becomes its bias, then a chain of activations
    // becomes eltwise post-ops. Anything else (a residual add, a scale)
    // leaves the whole epilogue to the generated kernel: oneDNN's binary
    // post-ops measured slower than that kernel (docs/cpu-backend.md).
    const Value *chain = anchor.result(), *addedBias = nullptr;
    size_t next = 1;
    int channelAxis = anchor.is(OpKind::Conv) ? 1 : int(dst.size()) - 1;
    bool hasBias = anchor.is(OpKind::Conv) || anchor.is(OpKind::MatMul) || anchor.is(OpKind::Gemm);
    if (fold && hasBias && group.ops.size() > 1 && group.ops[1]->is(OpKind::Add) &&
        !anchor.operand(2)) {
      const Op &add = *group.ops[1];
      const Value *other = add.operand(0) == chain ? add.operand(1) : add.operand(0);
      if (other != chain && sources.count(other) &&
          sources.at(other).type->type.rank() <= dst.size()) {
        Dims d = padTo(dimsOf(*sources.at(other).type), dst.size());
        bool perChannel = true;
        for (size_t k = 0; k < d.size(); ++k)
          perChannel &= d[k] == (int(k) == channelAxis ? dst[k] : 1);
        if (perChannel) {
          addedBias = other;
          chain = add.result();
          next = 2;
        }
      }
    }
    dnnl::post_ops post;
    for (; fold && next < group.ops.size(); ++next) {
      const Op &op = *group.ops[next];
      using A = dnnl::algorithm;
      std::optional<A> eltwise;
      float alpha = 0, beta = 0;
      const Op *last = &op; // the op whose result the post-op computes
      switch (op.kind) {
      case OpKind::Relu: eltwise = A::eltwise_relu; break;
      case OpKind::LeakyRelu: eltwise = A::eltwise_relu, alpha = float(op.getFloat("alpha")); break;
      case OpKind::HardSwish: eltwise = A::eltwise_hardswish; break;
      case OpKind::Sigmoid: {
        // x * Sigmoid(x) (SiLU) is one post-op, swish with alpha 1, where
        // nothing else reads the Sigmoid.
        const Op *mul = next + 1 < group.ops.size() ? group.ops[next + 1].get() : nullptr;
        const Value *sig = op.result();
        bool silu =
            op.operand(0) == chain && mul && mul->is(OpKind::Mul) && mul->operands.size() == 2 &&
            ((mul->operand(0) == chain && mul->operand(1) == sig) ||
             (mul->operand(0) == sig && mul->operand(1) == chain)) &&
            std::find(group.results.begin(), group.results.end(), sig) == group.results.end();
        if (silu)
          eltwise = A::eltwise_swish, alpha = 1.f, last = mul;
        else
          eltwise = A::eltwise_logistic;
        break;
      }
      case OpKind::Tanh: eltwise = A::eltwise_tanh; break;
      case OpKind::Elu: eltwise = A::eltwise_elu, alpha = float(op.getFloat("alpha")); break;
      case OpKind::Gelu:
        eltwise =
            op.getString("approximate") == "tanh" ? A::eltwise_gelu_tanh : A::eltwise_gelu_erf;
        break;
      case OpKind::Clip: {
        // Bounds must be f32 scalar constants; an absent one does not clip.
        auto bound = [](const Value *v, float dflt, float &out) {
          if (!v)
            return out = dflt, true;
          if (!v->isConstant() || v->type.dtype != DType::F32 || v->data->size != 4)
            return false;
          return out = *v->data->as<float>(), true;
        };
        if (bound(op.operand(1), -INFINITY, alpha) && bound(op.operand(2), INFINITY, beta))
          eltwise = A::eltwise_clip;
        break;
      }
      default: break;
      }
      if (!eltwise || op.operand(0) != chain || op.results.size() != 1)
        break;
      post.append_eltwise(1.f, *eltwise, alpha, beta);
      chain = last->result();
      if (last != &op)
        ++next; // the swish's Mul
    }
    if (next != group.ops.size()) { // all or nothing: the kernel takes the whole epilogue
      post = dnnl::post_ops();
      addedBias = nullptr;
      call->epilogueLeft_ = true;
    }
    size_t folded = post.len() + (addedBias ? 1 : 0);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post);

    memory::desc weightsWant;
    const Value *weightsValue = nullptr;
    int dstArg = DNNL_ARG_DST; // the argument the result is
    const Value &x = *sources.at(anchor.operand(0)).type;
    if (std::optional<dnnl::algorithm> reduce = reductionOf(anchor)) {
      // Reduced axes keep a 1 in dst (keepdims=0 drops them: the same bytes).
      std::vector<int64_t> axes = reducedAxes(anchor, x.type.rank());
      Dims src = dimsOf(x), kept = src;
      for (int64_t a : axes)
        kept[size_t(a)] = 1;
      for (int64_t d : src)
        if (d == 0)
          throw Reject{"an empty reduction"};
      dnnl::reduction::desc d(*reduce, plain(src), plain(kept), 0.f, 0.f);
      dnnl::reduction::primitive_desc pd(d, attr, impl.engine);
      impl.primitive = dnnl::reduction(pd);
      call->describe_ = std::string("onednn reduction ") + pd.impl_info_str();
      dst = kept;
      bind(anchor.operand(0), DNNL_ARG_SRC, plain(src));
      // Every spatial axis and no other reduced, no post-ops: dst [N,C,1..]
      // has the same bytes in any unpadded layout with N outermost, so src
      // may come in a conv's layout (readSrcLike).
      bool spatial = src.size() >= 3 && kept[0] == src[0] && kept[1] == src[1] && !post.len();
      for (size_t a = 2; a < kept.size(); ++a)
        spatial &= kept[a] == 1;
      if (spatial)
        impl.reduction = *reduce, impl.reducedDst = plain(kept), call->anyLayoutSrc_ = true;
    } else if (anchor.is(OpKind::MaxPool) || anchor.is(OpKind::AveragePool)) {
      if (anchor.results.size() != 1 || anchor.getString("auto_pad") != "NOTSET" ||
          anchor.getInt("channels_last"))
        throw Reject{"pooling with indices, auto_pad or channels_last"};
      size_t sp = x.type.rank() - 2;
      Dims src = dimsOf(x), kernel = anchor.getInts("kernel_shape");
      Dims strides = intsOr(anchor, "strides", sp, 1), dil = intsOr(anchor, "dilations", sp, 1);
      std::vector<int64_t> pads = intsOr(anchor, "pads", 2 * sp, 0);
      Dims padL(pads.begin(), pads.begin() + long(sp)), padR(pads.begin() + long(sp), pads.end());
      bool extended = false;
      for (size_t i = 0; i < sp; ++i) {
        // ceil_mode: oneDNN's output size formula needs the end pad grown
        // to cover the last window.
        int64_t window = (kernel[i] - 1) * dil[i] + 1;
        int64_t need = (dst[i + 2] - 1) * strides[i] + window - src[i + 2] - padL[i];
        extended |= need > padR[i];
        padR[i] = std::max(padR[i], need);
        --dil[i]; // oneDNN counts the gaps
      }
      dnnl::algorithm alg = dnnl::algorithm::pooling_max;
      if (anchor.is(OpKind::AveragePool)) {
        if (anchor.getInt("count_include_pad") && extended)
          throw Reject{"ceil_mode average pooling counting pads"};
        alg = anchor.getInt("count_include_pad") ? dnnl::algorithm::pooling_avg_include_padding
                                                 : dnnl::algorithm::pooling_avg_exclude_padding;
      }
      // src in a producer conv's layout (poolReading), dst then in the
      // layout oneDNN picks for it, reordered out unless the plan keeps it.
      memory::desc srcMd = srcFrom ? srcFrom->impl_->args.at(DNNL_ARG_DST).get_desc() : plain(src);
      memory::desc dstMd =
          srcFrom ? memory::desc(dst, memory::data_type::f32, memory::format_tag::any) : plain(dst);
      dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, srcMd, dstMd,
                                       strides, kernel, dil, padL, padR);
      dnnl::pooling_v2_forward::primitive_desc pd(d, attr, impl.engine);
      if (srcFrom && std::string(pd.impl_info_str()).rfind("ref", 0) == 0)
        throw Reject{"oneDNN has only its reference pooling for this layout"};
      impl.primitive = dnnl::pooling_v2_forward(pd);
      call->describe_ = std::string("onednn pooling ") + pd.impl_info_str();
      bind(anchor.operand(0), DNNL_ARG_SRC, srcMd);
      if (srcFrom) {
        call->srcLayout_ = layoutName(srcMd);
        call->dstLayout_ = layoutName(pd.dst_desc());
        if (pd.dst_desc() != plain(dst))
          impl.userDst = memory(pd.dst_desc(), impl.engine);
      }
    } else if (anchor.is(OpKind::ConvTranspose)) {
      // A convolution's backward-data pass, as oneDNN's deconvolution (its
      // bias and post-ops too): dst = (src - 1) * stride + effective kernel
      // - padding_l - padding_r, so the output padding is taken off the
      // trailing pad.
      weightsValue = anchor.operand(1);
      size_t sp = x.type.rank() - 2;
      if (anchor.getString("auto_pad") != "NOTSET" || !anchor.getInts("output_shape").empty() ||
          anchor.getInt("channels_last"))
        throw Reject{"ConvTranspose with auto_pad, output_shape or channels_last"};
      if (sp < 1 || sp > 3)
        throw Reject{"a transposed convolution with " + std::to_string(sp) + " spatial axes"};
      const Value &w = *sources.at(weightsValue).type;
      int64_t g = anchor.getInt("group");
      Dims strides = intsOr(anchor, "strides", sp, 1), dil = intsOr(anchor, "dilations", sp, 1);
      std::vector<int64_t> pads = intsOr(anchor, "pads", 2 * sp, 0),
                           outPad = intsOr(anchor, "output_padding", sp, 0);
      for (int64_t &d : dil)
        --d; // oneDNN counts the gaps
      Dims padL(pads.begin(), pads.begin() + long(sp)), padR(pads.begin() + long(sp), pads.end());
      for (size_t i = 0; i < sp; ++i)
        padR[i] -= outPad[i];
      // ONNX's W [C, M/g, k...] is oneDNN's [g, M/g (oc), C/g (ic), k...]
      // with the channel axes' strides exchanged: the same bytes.
      Dims wd = dimsOf(w);
      int64_t C = wd[0], Mg = wd[1], Cg = C / g, KS = 1;
      for (size_t i = 2; i < wd.size(); ++i)
        KS *= wd[i];
      Dims spatial(wd.begin() + 2, wd.end()), kStr = denseStrides(spatial);
      Dims dims{Mg, Cg}, st{KS, Mg * KS}; // (oc, ic): strides KS, oc * KS
      if (g > 1)
        dims.insert(dims.begin(), g), st.insert(st.begin(), Cg * Mg * KS);
      dims.insert(dims.end(), spatial.begin(), spatial.end());
      st.insert(st.end(), kStr.begin(), kStr.end());
      memory::desc wUser(dims, memory::data_type::f32, st);
      memory::desc bias;
      if (const Value *b = anchor.operand(2))
        bind(b, DNNL_ARG_BIAS, bias = plain({dst[1]}));
      bind(anchor.operand(0), DNNL_ARG_SRC, plain(dimsOf(x)));
      memory::desc wAny(dims, memory::data_type::f32, memory::format_tag::any);
      memory::desc anyX(dimsOf(x), memory::data_type::f32, memory::format_tag::any);
      memory::desc anyY(dst, memory::data_type::f32, memory::format_tag::any);
      dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::deconvolution_direct, anyX, wAny, bias,
                                          anyY, strides, dil, padL, padR);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, impl.engine);
      if (pd.src_desc() != plain(dimsOf(x))) {
        impl.userSrc = impl.args.at(DNNL_ARG_SRC);
        impl.args[DNNL_ARG_SRC] = memory(pd.src_desc(), impl.engine);
      }
      if (pd.dst_desc() != plain(dst))
        impl.userDst = memory(pd.dst_desc(), impl.engine);
      call->srcLayout_ = layoutName(pd.src_desc());
      call->dstLayout_ = layoutName(pd.dst_desc());
      weightsWant = pd.weights_desc();
      impl.userWeights = memory(wUser, impl.engine, DNNL_MEMORY_NONE);
      impl.primitive = dnnl::deconvolution_forward(pd);
      call->describe_ = std::string("onednn deconv ") + pd.impl_info_str();
    } else if (anchor.is(OpKind::ConvWeightGrad)) {
      // A convolution's backward-weights pass: src X and diff_dst dY in,
      // diff_weights out, all plain (the result is the weights' own layout).
      if (anchor.getInt("channels_last"))
        throw Reject{"channels_last"};
      size_t sp = x.type.rank() - 2;
      if (sp < 1 || sp > 3)
        throw Reject{"a convolution with " + std::to_string(sp) + " spatial axes"};
      const Value &dy = *sources.at(anchor.operand(1)).type;
      int64_t g = anchor.getInt("group");
      Dims strides = intsOr(anchor, "strides", sp, 1), dil = intsOr(anchor, "dilations", sp, 1);
      std::vector<int64_t> pads = intsOr(anchor, "pads", 2 * sp, 0);
      for (int64_t &d : dil)
        --d;
      Dims padL(pads.begin(), pads.begin() + long(sp)), padR(pads.begin() + long(sp), pads.end());
      Dims wd = dst;
      if (g > 1) { // [g, M/g, C/g, k...], the same bytes
        wd.insert(wd.begin(), g);
        wd[1] /= g;
      }
      memory::desc src = plain(dimsOf(x)), diffDst = plain(dimsOf(dy)), weights = plain(wd);
      dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::algorithm::convolution_direct, src, weights,
                                          diffDst, strides, dil, padL, padR),
          impl.engine);
      dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, src, weights,
                                                 diffDst, strides, dil, padL, padR);
      dnnl::convolution_backward_weights::primitive_desc pd(d, attr, impl.engine, hint);
      if (pd.diff_weights_desc() != weights || pd.src_desc() != src ||
          pd.diff_dst_desc() != diffDst)
        throw Reject{"oneDNN's backward-weights wants other layouts"};
      bind(anchor.operand(0), DNNL_ARG_SRC, src);
      bind(anchor.operand(1), DNNL_ARG_DIFF_DST, diffDst);
      dstArg = DNNL_ARG_DIFF_WEIGHTS;
      impl.primitive = dnnl::convolution_backward_weights(pd);
      call->describe_ = std::string("onednn conv-bwd-weights ") + pd.impl_info_str();
    } else if (anchor.is(OpKind::Conv)) {
      weightsValue = anchor.operand(1);
      if (anchor.getString("auto_pad") != "NOTSET" || anchor.getInt("channels_last"))
        throw Reject{"auto_pad or channels_last"};
      const Value &w = *sources.at(weightsValue).type;
      size_t sp = x.type.rank() - 2;
      if (sp < 1 || sp > 3)
        throw Reject{"a convolution with " + std::to_string(sp) + " spatial axes"};
      int64_t g = anchor.getInt("group");
      Dims strides = intsOr(anchor, "strides", sp, 1), dil = intsOr(anchor, "dilations", sp, 1);
      std::vector<int64_t> pads = intsOr(anchor, "pads", 2 * sp, 0);
      for (int64_t &d : dil)
        --d; // oneDNN counts the gaps
      Dims padL(pads.begin(), pads.begin() + long(sp)), padR(pads.begin() + long(sp), pads.end());
      Dims wd = dimsOf(w);
      memory::desc wUser = plain(wd);
      if (g > 1) { // oneDNN's grouped weights: [g, M/g, C/g, k...], the same bytes
        wd.insert(wd.begin(), g);
        wd[1] /= g;
        wUser = plain(wd);
      }
      memory::desc bias;
      if (const Value *b = anchor.operand(2) ? anchor.operand(2) : addedBias)
        bind(b, DNNL_ARG_BIAS, bias = plain({dst[1]}));
      bind(anchor.operand(0), DNNL_ARG_SRC, plain(dimsOf(x)));
      memory::desc wAny(wd, memory::data_type::f32, memory::format_tag::any);
      // Activations in the layout oneDNN prefers (blocked nChw8c: its jit
      // kernels), with reorders in and out: faster than its NCHW im2col
      // path even for small convs (docs/cpu-backend.md).
      memory::desc anyX(dimsOf(x), memory::data_type::f32, memory::format_tag::any);
      memory::desc anyY(dst, memory::data_type::f32, memory::format_tag::any);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, anyX, wAny, bias, anyY,
                                        strides, dil, padL, padR);
      dnnl::convolution_forward::primitive_desc pd(d, attr, impl.engine);
      if (pd.src_desc() != plain(dimsOf(x))) {
        impl.userSrc = impl.args.at(DNNL_ARG_SRC);
        impl.args[DNNL_ARG_SRC] = memory(pd.src_desc(), impl.engine);
      }
      if (pd.dst_desc() != plain(dst))
        impl.userDst = memory(pd.dst_desc(), impl.engine);
      call->srcLayout_ = layoutName(pd.src_desc());
      call->dstLayout_ = layoutName(pd.dst_desc());
      weightsWant = pd.weights_desc();
      impl.userWeights = memory(wUser, impl.engine, DNNL_MEMORY_NONE);
      impl.primitive = dnnl::convolution_forward(pd);
      call->describe_ = std::string("onednn conv ") + pd.impl_info_str();
    } else {
      weightsValue = anchor.operand(1);
      const Value &a = x;
      const Value &b = *sources.at(weightsValue).type;
      if (a.type.rank() < 2 || b.type.rank() < 2)
        throw Reject{"a matrix-vector product"};
      // tc-opt --target=cuda's views: the generated kernel reads them.
      if (anchor.is(OpKind::MatMul) && !isPlainMatMul(anchor))
        throw Reject{"a MatMul with transA, transB or alpha"};
      Dims ad = padTo(dimsOf(a), dst.size()), bd = padTo(dimsOf(b), dst.size());
      memory::desc am = plain(ad), bm = plain(bd), bias;
      if (anchor.is(OpKind::Gemm)) {
        auto transposed = [](const Dims &d) {
          return memory::desc({d[1], d[0]}, memory::data_type::f32, Dims{1, d[1]});
        };
        if (anchor.getInt("transA"))
          am = transposed(ad);
        if (anchor.getInt("transB"))
          bm = transposed(bd);
        float alpha = float(anchor.getFloat("alpha"));
        if (const Value *c = anchor.operand(2)) {
          if (anchor.getFloat("beta") != 1.0 || alpha != 1.f)
            throw Reject{"Gemm with beta or alpha other than 1 and a C"};
          const Value &ct = *sources.at(c).type;
          if (ct.type.rank() > 2)
            throw Reject{"a C of rank > 2"};
          bind(c, DNNL_ARG_BIAS, bias = plain(padTo(dimsOf(ct), 2)));
        } else if (alpha != 1.f) {
          if (addedBias)
            throw Reject{"Gemm with alpha other than 1 and a bias"};
          attr.set_output_scales(0, {alpha});
        }
      }
      if (addedBias)
        bind(addedBias, DNNL_ARG_BIAS,
             bias = plain(padTo(dimsOf(*sources.at(addedBias).type), dst.size())));
      // Constant weights go in the layout the primitive picks, packed once
      // below, as a conv's are: read in place, Gemm's transB=1 [N,K] (every
      // exported nn.Linear) ran up to 2.4x slower at small M, and gpt2_tiny's
      // plain [K,N] ones 0.184 -> 0.159 ms a run (docs/cpu-backend.md). The
      // cost is a second copy of those weights, the artifact's mmapped pages
      // being no longer read.
      memory::desc bWant =
          sources.at(weightsValue).fixed(fused)
              ? memory::desc(bm.dims(), memory::data_type::f32, memory::format_tag::any)
              : bm;
      dnnl::matmul::desc d(am, bWant, bias, plain(dst));
      dnnl::matmul::primitive_desc pd(d, attr, impl.engine);
      weightsWant = pd.weights_desc();
      impl.userWeights = memory(bm, impl.engine, DNNL_MEMORY_NONE);
      impl.primitive = dnnl::matmul(pd);
      call->describe_ = std::string("onednn matmul ") + pd.impl_info_str() +
                        (weightsWant == bm ? "" : " with packed weights");
      bind(anchor.operand(0), DNNL_ARG_SRC, am);
    }
    memory userDst(plain(dst), impl.engine, DNNL_MEMORY_NONE);
    impl.bindings.push_back({userDst, -1});
    if (impl.userDst) // the primitive writes its own layout; swap roles
      std::swap(*impl.userDst, userDst);
    impl.args[dstArg] = userDst;
    if (impl.userSrc)
      impl.srcIn = dnnl::reorder(*impl.userSrc, impl.args.at(DNNL_ARG_SRC));
    if (impl.userDst)
      impl.dstOut = dnnl::reorder(impl.args.at(DNNL_ARG_DST), *impl.userDst);

    if (serial)
      call->describe_ += kOnOneThread;
    if (folded)
      call->describe_ += " + " + std::to_string(folded) + " post-ops";
    if (!weightsValue)
      return call;
    // Weights: used as they are when the primitive wants the user's layout,
    // else reordered (once, here, when they are a constant).
    const Source &ws = sources.at(weightsValue);
    impl.weightsConstant = ws.fixed(fused);
    impl.weightsOperand = ws.operand;
    const void *wBytes = ws.constant            ? ws.constant->data->ptr
                         : impl.weightsConstant ? fused.operand(size_t(ws.operand))->data->ptr
                                                : nullptr;
    if (weightsWant == impl.userWeights.get_desc()) {
      impl.weights = impl.userWeights;
    } else {
      impl.weights = memory(weightsWant, impl.engine);
      impl.weightsIn = dnnl::reorder(impl.userWeights, impl.weights);
    }
    if (wBytes) {
      impl.userWeights.set_data_handle(const_cast<void *>(wBytes));
      if (impl.weightsIn) {
        reorderNow(*impl.weightsIn, impl.stream, impl.userWeights, impl.weights);
        impl.stream.wait();
      }
    }
    impl.args[DNNL_ARG_WEIGHTS] = impl.weights;
  } catch (const Reject &r) {
    why = r.why;
    return nullptr;
  } catch (const dnnl::error &e) {
    why = std::string("oneDNN: ") + e.what();
    return nullptr;
  }
  return call;
}

void OneDnnCall::keepLayouts(bool src, bool dst) {
  Impl &impl = *impl_;
  // The binding that fed the reorder now feeds the primitive itself.
  if (src && !srcLayout_.empty() && impl.srcIn) {
    impl.retarget(*impl.userSrc, impl.args.at(DNNL_ARG_SRC));
    impl.srcIn.reset();
  }
  if (dst && !dstLayout_.empty() && impl.dstOut) {
    impl.retarget(*impl.userDst, impl.args.at(DNNL_ARG_DST));
    impl.dstOut.reset();
  }
}

bool OneDnnCall::shareSrcOf(const OneDnnCall &producer) {
  Impl &impl = *impl_;
  const Impl &p = *producer.impl_;
  // A producer with an epilogue kernel holds the value before that epilogue.
  if (!impl.srcIn || !p.dstOut || producer.epilogueLeft_ || srcLayout_.empty() ||
      producer.dstLayout_ != srcLayout_ ||
      p.args.at(DNNL_ARG_DST).get_desc() != impl.args.at(DNNL_ARG_SRC).get_desc())
    return false;
  // The producer's dst memory owns its buffer, written before this step runs.
  impl.args[DNNL_ARG_SRC] = p.args.at(DNNL_ARG_DST);
  impl.srcIn.reset();
  impl.execArgs.clear();
  return true;
}

bool OneDnnCall::readSrcLike(const OneDnnCall &producer, bool apply) {
  Impl &impl = *impl_;
  const Impl &p = *producer.impl_;
  if (!impl.reduction || producer.dstLayout_.empty() || !p.userDst)
    return false;
  memory::desc src = p.args.at(DNNL_ARG_DST).get_desc();
  Dims dims = src.dims();
  if (dims != impl.args.at(DNNL_ARG_SRC).get_desc().dims())
    return false;
  // oneDNN 2.6's jit reductions take plain layouts only; its pooling over
  // the whole spatial window takes the conv layouts (jit, with dst alike).
  dnnl::algorithm alg;
  if (*impl.reduction == dnnl::algorithm::reduction_mean)
    alg = dnnl::algorithm::pooling_avg_exclude_padding;
  else if (*impl.reduction == dnnl::algorithm::reduction_max)
    alg = dnnl::algorithm::pooling_max;
  else
    return false;
  OneThread team(serial_);
  try {
    Dims window(dims.begin() + 2, dims.end()), ones(window.size(), 1), zeros(window.size(), 0);
    memory::desc dst(impl.reducedDst.dims(), memory::data_type::f32, memory::format_tag::any);
    dnnl::pooling_v2_forward::primitive_desc pd(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, ones,
                                       window, zeros, zeros, zeros),
        impl.engine);
    std::string info = pd.impl_info_str();
    // dst [N,C,1..] in the pooling's layout must put every element where
    // the plain buffer has it (nhwc and nChw8c do).
    if (info.rfind("ref", 0) == 0 || !plainBytes(pd.dst_desc()))
      return false; // oneDNN's reference loop: the reorder is cheaper
    if (!apply)
      return true;
    auto rebind = [&](int arg, const memory::desc &md) {
      memory m(md, impl.engine, DNNL_MEMORY_NONE);
      impl.retarget(impl.args.at(arg), m);
      impl.args[arg] = m;
      impl.execArgs.clear();
    };
    rebind(DNNL_ARG_SRC, src);
    rebind(DNNL_ARG_DST, pd.dst_desc());
    impl.primitive = dnnl::pooling_v2_forward(pd);
    describe_ = "onednn pooling " + info + (serial_ ? kOnOneThread : "");
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

void OneDnnCall::run(void *const *args, void *result) {
  OneThread team(serial_);
  Impl &impl = *impl_;
  for (Impl::Binding &b : impl.bindings)
    if (void *p = b.operand < 0 ? result : args[b.operand]; p != b.bound)
      b.m.set_data_handle(p), b.bound = p;
  if (impl.srcIn)
    reorderNow(*impl.srcIn, impl.stream, *impl.userSrc, impl.args.at(DNNL_ARG_SRC));
  if (impl.weightsOperand >= 0 && !impl.weightsConstant) {
    impl.userWeights.set_data_handle(args[impl.weightsOperand]);
    if (impl.weightsIn)
      reorderNow(*impl.weightsIn, impl.stream, impl.userWeights, impl.weights);
  }
  if (impl.execArgs.empty())
    for (const auto &[arg, m] : impl.args)
      impl.execArgs.push_back({arg, m.get()});
  dnnl::error::wrap_c_api(dnnl_primitive_execute(impl.primitive.get(), impl.stream.get(),
                                                 int(impl.execArgs.size()), impl.execArgs.data()),
                          "could not execute a primitive");
  if (impl.dstOut)
    reorderNow(*impl.dstOut, impl.stream, impl.args.at(DNNL_ARG_DST), *impl.userDst);
  impl.stream.wait();
}

} // namespace tc
