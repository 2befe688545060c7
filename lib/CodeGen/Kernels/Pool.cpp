// The Pool family: a lone 2-D MaxPool or AveragePool.
#include "Families.h"
#include <cmath>
#include <sstream>

namespace tc::kernels {

// A lone 2-D NCHW MaxPool (no indices) or AveragePool: row (n, c, oh),
// ow inner (CPU: a loop over ow per row; CUDA: one thread per element).
// Windows are clipped to the input (ceil_mode's last window too);
// AveragePool divides by the valid count, or with count_include_pad by
// the window's extent inside the padded input, as onnxruntime does.
std::optional<EmittedKernel> emitPool(const KernelContext &c, const KernelClass &cls) {
  const Op &op = *cls.anchor;
  const Value *x = op.operand(0), *y = op.result();
  bool avg = op.is(OpKind::AveragePool);
  if (c.f.ops.size() != 1 || c.f.results.size() != 1 || op.results.size() != 1 ||
      c.argIndex(x) == SIZE_MAX || x->type.rank() != 4 || op.getString("auto_pad") != "NOTSET")
    return c.reject("pooling other than a lone 2-D NCHW op with explicit pads");
  DType t = x->type.dtype;
  if (!isFloat(t) || !c.st(t))
    return c.reject("pooling on " + x->type.str());
  auto attr = [&](const char *name, size_t i, int64_t dflt) {
    const std::vector<int64_t> &v = op.getInts(name);
    return std::to_string(v.empty() ? dflt : v.at(i));
  };
  if (avg && (attr("dilations", 0, 1) != "1" || attr("dilations", 1, 1) != "1"))
    return c.reject("a dilated AveragePool");
  const char *S = c.st(t), *T = c.ct(t);
  std::string symbol = "tc_" + c.f.name;
  std::ostringstream os;
  os << "// group @" << c.f.name << ": " << op.name() << "\n";
  c.emitSignature(os, symbol, kPointwiseBlock);
  os << "  const " << S << " *__restrict X = (const " << S << " *)bufs[0];\n  " << S
     << " *__restrict Y = (" << S << " *)bufs[1];\n";
  os << "  const int64_t H = " << c.dim(x, 2) << ", W = " << c.dim(x, 3) << ", OH = " << c.dim(y, 2)
     << ", OW = " << c.dim(y, 3) << ";\n";
  os << "  const int64_t KH = " << op.getInts("kernel_shape").at(0)
     << ", KW = " << op.getInts("kernel_shape").at(1) << ", SH = " << attr("strides", 0, 1)
     << ", SW = " << attr("strides", 1, 1) << ", DH = " << attr("dilations", 0, 1)
     << ", DW = " << attr("dilations", 1, 1) << ", PH = " << attr("pads", 0, 0)
     << ", PW = " << attr("pads", 1, 0) << ", PHE = " << attr("pads", 2, 0)
     << ", PWE = " << attr("pads", 3, 0) << ";\n";
  std::ostringstream row, win; // per row (n, c, oh); per result element (ow)
  row << "    const int64_t oh = row % OH;\n"
      << "    const " << S << " *__restrict xp = X + (row / OH) * H * W;\n";
  win << "      const int64_t h0 = oh * SH - PH, w0 = ow * SW - PW;\n";
  std::string xhw = c.load(t, "xp[h * W + w]");
  if (avg) {
    win << "      int64_t h1 = h0 + KH, w1 = w0 + KW;\n"
        << "      if (h1 > H + PHE) h1 = H + PHE;\n      if (w1 > W + PWE) w1 = W + PWE;\n"
        << "      const int64_t padded = (h1 - h0) * (w1 - w0);\n"
        << "      const int64_t ha = h0 < 0 ? 0 : h0, wa = w0 < 0 ? 0 : w0;\n"
        << "      const int64_t hb = h1 > H ? H : h1, wb = w1 > W ? W : w1;\n"
        << "      " << T << " acc = 0;\n"
        << "      for (int64_t h = ha; h < hb; ++h)\n"
        << "        for (int64_t w = wa; w < wb; ++w) acc += " << xhw << ";\n"
        << "      const int64_t count = "
        << (op.getInt("count_include_pad") ? "padded" : "(hb - ha) * (wb - wa)") << ";\n"
        << "      Y[row * OW + ow] = "
        << c.store(t, "acc / " + std::string(T) + "(count > 0 ? count : 1)") << ";\n";
  } else {
    win << "      " << T << " acc = " << floatLiteral(-INFINITY, t, c.dialect) << ";\n"
        << "      for (int64_t kh = 0; kh < KH; ++kh) {\n"
        << "        const int64_t h = h0 + kh * DH;\n        if (h < 0 || h >= H) continue;\n"
        << "        for (int64_t kw = 0; kw < KW; ++kw) {\n"
        << "          const int64_t w = w0 + kw * DW;\n          if (w < 0 || w >= W) continue;\n"
        << "          acc = tc_max(acc, " << xhw << ");\n        }\n      }\n"
        << "      Y[row * OW + ow] = " << c.store(t, "acc") << ";\n";
  }
  if (c.cuda()) {
    os << "  const int64_t inner = OW, n = " << c.dim(y, 0) << " * " << c.dim(y, 1)
       << " * OH * OW;\n"
       << kGridHead;
    c.emitGridLoops(os, "0", true, [&](const std::string &) {
      os << row.str() << "    const int64_t ow = j;\n    {\n" << win.str() << "    }\n";
    });
    os << "}\n";
  } else {
    os << "  for (int64_t row = begin; row < end; ++row) {\n"
       << row.str() << "    for (int64_t ow = 0; ow < OW; ++ow) {\n"
       << win.str() << "    }\n  }\n}\n";
  }
  EmittedKernel k = c.kernel(symbol, os.str());
  k.block = c.cuda() ? kPointwiseBlock : 0;
  k.halfTypes = c.cuda() && c.usesHalf();
  return k;
}

} // namespace tc::kernels
