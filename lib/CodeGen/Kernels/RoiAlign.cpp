// RoiAlign as an index move (IndexMoveParts.h), both dialects: result
// element (r, c, ph, pw) is bin (ph, pw) of region r over channel c of
// image batch_indices[r] (out of range: an index fault), the average or the
// largest of its GH x GW bilinear samples, each computed per element in
// double as the reference's roiAlignKernel (lib/Runtime/Ref/Spatial.cpp),
// rounded once.
#include "IndexMoveParts.h"

namespace tc::kernels {

bool emitRoiAlign(MoveCode &m) {
  const Op &op = m.op;
  const KernelContext &c = m.c;
  if (m.r != 4 || m.x->type.rank() != 4 || !m.computed())
    return m.ok && c.noKernel("a RoiAlign of rank other than 4");
  const Value *rois = op.operand(1);
  auto lit = [&](double v) { return floatLiteral(v, DType::F64, c.dialect); };
  bool halfPixel = op.getString("coordinate_transformation_mode") == "half_pixel",
       avg = op.getString("mode") == "avg";
  int64_t ratio = op.getInt("sampling_ratio");
  std::string OH = std::to_string(op.getInt("output_height")) + ".0",
              OW = std::to_string(op.getInt("output_width")) + ".0",
              scale = lit(op.getFloat("spatial_scale")), off = halfPixel ? "0.5" : "0.0",
              H = c.dim(m.x, 2), W = c.dim(m.x, 3), x = m.data(0), rv = m.dataOf(rois);
  m.index("b", op.operand(2), "c0", c.dim(m.x, 0));
  auto roi = [&](int k) {
    return "(double)" + c.load(rois->type.dtype, rv + "[c0 * 4 + " + std::to_string(k) + "]");
  };
  m.body << "    const double x0 = " << roi(0) << " * " << scale << " - " << off
         << ", y0 = " << roi(1) << " * " << scale << " - " << off << ";\n"
         << "    double rw = " << roi(2) << " * " << scale << " - " << off
         << " - x0, rh = " << roi(3) << " * " << scale << " - " << off << " - y0;\n";
  if (!halfPixel)
    m.body << "    rw = rw > 1.0 ? rw : 1.0; rh = rh > 1.0 ? rh : 1.0;\n";
  m.body << "    const double bh = rh / " << OH << ", bw = rw / " << OW << ";\n"
         << "    const double gh = "
         << (ratio > 0 ? std::to_string(ratio) + ".0" : "tc_ceil(rh / " + OH + ")")
         << ", gw = " << (ratio > 0 ? std::to_string(ratio) + ".0" : "tc_ceil(rw / " + OW + ")")
         << ";\n"
         // The reference's bound on the samples a bin takes.
         << "    if (!(gh * gw <= 16777216.0)) "
         << m.indexFault("(int64_t)(gh * gw)", "(int64_t)16777217") << "\n"
         << "    const int64_t GH = (int64_t)gh, GW = (int64_t)gw;\n"
         << "    const int64_t plane = (b * " << c.dim(m.x, 1) << " + c1) * " << H << " * " << W
         << ";\n"
         << "    double acc = 0;\n"
         << "    for (int64_t iy = 0; iy < GH; ++iy)\n"
         << "      for (int64_t ix = 0; ix < GW; ++ix) {\n"
         << "        double y = y0 + (double)c2 * bh + ((double)iy + 0.5) * bh / gh;\n"
         << "        double x = x0 + (double)c3 * bw + ((double)ix + 0.5) * bw / gw;\n"
         // Outside: no corners, weights 0 (the reference's empty Sample).
         << "        int64_t pos[4] = {0, 0, 0, 0};\n"
         << "        double w[4] = {0, 0, 0, 0};\n"
         << "        if (!(y < -1.0 || y > (double)" << H << " || x < -1.0 || x > (double)" << W
         << ")) {\n"
         << "          y = y > 0.0 ? y : 0.0; x = x > 0.0 ? x : 0.0;\n"
         << "          int64_t ya = (int64_t)y, xa = (int64_t)x, yb = ya + 1, xb = xa + 1;\n"
         << "          if (ya >= " << H << " - 1) { ya = yb = " << H << " - 1; y = (double)ya; }\n"
         << "          if (xa >= " << W << " - 1) { xa = xb = " << W << " - 1; x = (double)xa; }\n"
         << "          const double ly = y - (double)ya, lx = x - (double)xa, hy = 1 - ly, hx = 1 "
            "- lx;\n"
         << "          pos[0] = ya * " << W << " + xa; pos[1] = ya * " << W
         << " + xb; pos[2] = yb * " << W << " + xa; pos[3] = yb * " << W << " + xb;\n"
         << "          w[0] = hy * hx; w[1] = hy * lx; w[2] = ly * hx; w[3] = ly * lx;\n"
         << "        }\n";
  std::string v = "w[q] * (double)" + m.load(x + "[plane + pos[q]]");
  if (avg)
    m.body << "        for (int q = 0; q < 4; ++q) acc += " << v << ";\n      }\n"
           << "    const int64_t n = GH * GW;\n"
           << "    out0[i] = " << m.store("acc / (double)(n > 1 ? n : 1)") << ";\n";
  else // ONNX (and onnxruntime): the largest weighted corner value
    m.body << "        double mx = 0;\n"
           << "        for (int q = 0; q < 4; ++q) { const double e = " << v
           << "; mx = q == 0 || mx < e ? e : mx; }\n"
           << "        acc = iy == 0 && ix == 0 ? mx : acc < mx ? mx : acc;\n      }\n"
           << "    out0[i] = " << m.store("acc") << ";\n";
  return true;
}

} // namespace tc::kernels
