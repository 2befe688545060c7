#include "OneDnnCall.h"
#include "tc/CodeGen/LibraryCall.h"
#include <cmath>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

namespace tc {

using dnnl::memory;
using Dims = memory::dims;

struct OneDnnCall::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args; // by DNNL_ARG_*
  // Where each argument's data comes from on a run.
  struct Binding {
    int arg;
    int operand; // index into the Fused op's operands; -1: the result
  };
  std::vector<Binding> bindings;
  // Weights in a layout the user's bytes are not in: reordered once when
  // constant, else on every run.
  memory userWeights, weights;
  int weightsOperand = -1;
  bool weightsConstant = false;
};

OneDnnCall::~OneDnnCall() = default;

void OneDnnCall::setThreads(unsigned n) { omp_set_num_threads(int(n)); }

namespace {

struct Reject {
  std::string why;
};

Dims dimsOf(const Value &v) {
  Dims d;
  for (const Dim &x : v.type.shape)
    d.push_back(x.size);
  return d;
}

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
};

} // namespace

std::unique_ptr<OneDnnCall> OneDnnCall::create(const Function &group, const Op &fused,
                                               std::string &why) {
  if (!isLibraryAnchored(group)) {
    why = "not a library call plus a pointwise epilogue";
    return nullptr;
  }
  std::unique_ptr<OneDnnCall> call(new OneDnnCall());
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
      impl.bindings.push_back({arg, s.operand});
    impl.args[arg] = m;
  };
  try {
    for (const Value *v : fused.operands)
      if (!v || v->type.dtype != DType::F32)
        throw Reject{"an operand that is not f32"};
    const Op &anchor = *group.ops.front();
    const Value &result = *fused.result();
    Dims dst = dimsOf(result);

    // The epilogue as post-ops: a chain where each op takes the previous
    // value and, for binary ops, one operand from outside the group.
    dnnl::post_ops post;
    const Value *chain = anchor.result();
    size_t folded = 0;
    for (size_t i = 1; i < group.ops.size(); ++i) {
      const Op &op = *group.ops[i];
      using A = dnnl::algorithm;
      std::optional<A> eltwise, binary;
      float alpha = 0, beta = 0;
      switch (op.kind) {
      case OpKind::Relu: eltwise = A::eltwise_relu; break;
      case OpKind::LeakyRelu: eltwise = A::eltwise_relu, alpha = float(op.getFloat("alpha")); break;
      case OpKind::Sigmoid: eltwise = A::eltwise_logistic; break;
      case OpKind::Tanh: eltwise = A::eltwise_tanh; break;
      case OpKind::Elu: eltwise = A::eltwise_elu, alpha = float(op.getFloat("alpha")); break;
      case OpKind::Gelu:
        eltwise =
            op.getString("approximate") == "tanh" ? A::eltwise_gelu_tanh : A::eltwise_gelu_erf;
        break;
      case OpKind::Add: binary = A::binary_add; break;
      case OpKind::Sub: binary = A::binary_sub; break;
      case OpKind::Mul: binary = A::binary_mul; break;
      case OpKind::Div: binary = A::binary_div; break;
      default: break;
      }
      // Add and Mul commute: the chain may come second.
      std::vector<Value *> operands = op.operands;
      if ((op.is(OpKind::Add) || op.is(OpKind::Mul)) && operands.size() == 2 &&
          operands[1] == chain)
        std::swap(operands[0], operands[1]);
      bool chained = operands[0] == chain && op.results.size() == 1;
      if (op.is(OpKind::Clip) && chained) {
        const Value *lo = op.operand(1), *hi = op.operand(2);
        auto scalar = [&](const Value *v, float dflt, float &out) {
          if (!v) {
            out = dflt;
            return true;
          }
          if (!v->isConstant() || v->type.dtype != DType::F32 || v->data->size != 4)
            return false;
          out = *v->data->as<float>();
          return true;
        };
        if (scalar(lo, -INFINITY, alpha) && scalar(hi, INFINITY, beta))
          eltwise = A::eltwise_clip;
      }
      if (eltwise && chained && op.operands.size() == 1 + (op.is(OpKind::Clip) ? 2 : 0)) {
        post.append_eltwise(1.f, *eltwise, alpha, beta);
      } else if (binary && chained && operands.size() == 2 && operands[1] != chain &&
                 sources.count(operands[1])) {
        const Source &s = sources.at(operands[1]);
        if (s.type->type.rank() > dst.size())
          break;
        Dims d = padTo(dimsOf(*s.type), dst.size());
        post.append_binary(*binary, plain(d));
        bind(operands[1], DNNL_ARG_ATTR_MULTIPLE_POST_OP(int(i - 1)) | DNNL_ARG_SRC_1, plain(d));
      } else {
        break;
      }
      chain = op.result();
      ++folded;
    }
    // Post-ops are all or nothing: a partial chain would leave the epilogue
    // kernel a value it cannot see.
    if (folded + 1 != group.ops.size()) {
      post = dnnl::post_ops();
      for (auto it = impl.args.begin(); it != impl.args.end();)
        it = it->first & DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE ? impl.args.erase(it) : std::next(it);
      std::erase_if(impl.bindings, [](const Impl::Binding &b) {
        return b.arg & DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE;
      });
      call->epilogueLeft_ = group.ops.size() > 1;
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post);

    memory::desc weightsWant;
    const Value *weightsValue = anchor.operand(1);
    if (anchor.is(OpKind::Conv)) {
      if (anchor.getString("auto_pad") != "NOTSET" || anchor.getInt("channels_last"))
        throw Reject{"auto_pad or channels_last"};
      const Value &x = *sources.at(anchor.operand(0)).type;
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
      if (const Value *b = anchor.operand(2))
        bind(b, DNNL_ARG_BIAS, bias = plain(dimsOf(*sources.at(b).type)));
      bind(anchor.operand(0), DNNL_ARG_SRC, plain(dimsOf(x)));
      memory::desc wAny(wd, memory::data_type::f32, memory::format_tag::any);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, plain(dimsOf(x)), wAny,
                                        bias, plain(dst), strides, dil, padL, padR);
      dnnl::convolution_forward::primitive_desc pd(d, attr, impl.engine);
      weightsWant = pd.weights_desc();
      impl.userWeights = memory(wUser, impl.engine, DNNL_MEMORY_NONE);
      impl.primitive = dnnl::convolution_forward(pd);
      call->describe_ = std::string("onednn conv ") + pd.impl_info_str();
    } else {
      const Value &a = *sources.at(anchor.operand(0)).type;
      const Value &b = *sources.at(weightsValue).type;
      if (a.type.rank() < 2 || b.type.rank() < 2)
        throw Reject{"a matrix-vector product"};
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
          attr.set_output_scales(0, {alpha});
        }
      }
      dnnl::matmul::desc d(am, bm, bias, plain(dst));
      dnnl::matmul::primitive_desc pd(d, attr, impl.engine);
      weightsWant = pd.weights_desc();
      impl.userWeights = memory(bm, impl.engine, DNNL_MEMORY_NONE);
      impl.primitive = dnnl::matmul(pd);
      call->describe_ = std::string("onednn matmul ") + pd.impl_info_str();
      bind(anchor.operand(0), DNNL_ARG_SRC, am);
    }
    impl.args[DNNL_ARG_DST] = memory(plain(dst), impl.engine, DNNL_MEMORY_NONE);
    impl.bindings.push_back({DNNL_ARG_DST, -1});

    // Weights: used as they are when the primitive wants the user's layout,
    // else reordered (once, here, when they are a constant).
    const Source &ws = sources.at(weightsValue);
    impl.weightsConstant = ws.constant || fused.operand(size_t(ws.operand))->isConstant();
    impl.weightsOperand = ws.operand;
    const void *wBytes = ws.constant            ? ws.constant->data->ptr
                         : impl.weightsConstant ? fused.operand(size_t(ws.operand))->data->ptr
                                                : nullptr;
    if (weightsWant == impl.userWeights.get_desc()) {
      impl.weights = impl.userWeights;
    } else {
      impl.weights = memory(weightsWant, impl.engine);
    }
    if (wBytes) {
      impl.userWeights.set_data_handle(const_cast<void *>(wBytes));
      if (impl.weights != impl.userWeights) {
        dnnl::reorder(impl.userWeights, impl.weights)
            .execute(impl.stream, impl.userWeights, impl.weights);
        impl.stream.wait();
      }
    }
    impl.args[DNNL_ARG_WEIGHTS] = impl.weights;
    if (folded)
      call->describe_ += " + " + std::to_string(folded) + " post-ops";
  } catch (const Reject &r) {
    why = r.why;
    return nullptr;
  } catch (const dnnl::error &e) {
    why = std::string("oneDNN: ") + e.what();
    return nullptr;
  }
  return call;
}

void OneDnnCall::run(void *const *args, void *result) {
  Impl &impl = *impl_;
  for (const Impl::Binding &b : impl.bindings)
    impl.args.at(b.arg).set_data_handle(b.operand < 0 ? result : args[b.operand]);
  if (!impl.weightsConstant) {
    impl.userWeights.set_data_handle(args[impl.weightsOperand]);
    if (impl.weights != impl.userWeights)
      dnnl::reorder(impl.userWeights, impl.weights)
          .execute(impl.stream, impl.userWeights, impl.weights);
  }
  impl.primitive.execute(impl.stream, impl.args);
  impl.stream.wait();
}

} // namespace tc
