"""Prints a tcir conv net whose weight is standardized ((w - mean) / std, as
NFNet does) before the conv: mixed-precision-weights.tcir. The weight has
more elements (256 x 257) than mixed-precision's per-channel statistics
(65536), so only the weight-preprocessing rule keeps its math f32."""
O, I = 256, 257
vals = ", ".join("%g" % (((i * 37) % 101 - 50) / 50.0) for i in range(O * I))
print("""module @m {
  func @main(%%x: f32[2,%d,4,4]) -> (f32[2,%d]) {
    %%w = const f32[%d,%d,1,1] [%s]
    %%mu = ReduceMean(%%w) {axes = [1, 2, 3]} : f32[%d,1,1,1] loc("m.onnx":"ws_mean")
    %%d = Sub(%%w, %%mu) : f32[%d,%d,1,1] loc("m.onnx":"ws_sub")
    %%sq = Mul(%%d, %%d) : f32[%d,%d,1,1] loc("m.onnx":"ws_sq")
    %%var = ReduceMean(%%sq) {axes = [1, 2, 3]} : f32[%d,1,1,1] loc("m.onnx":"ws_var")
    %%eps = const f32[] [1e-5]
    %%ve = Add(%%var, %%eps) : f32[%d,1,1,1] loc("m.onnx":"ws_eps")
    %%sd = Sqrt(%%ve) : f32[%d,1,1,1] loc("m.onnx":"ws_sqrt")
    %%ws = Div(%%d, %%sd) : f32[%d,%d,1,1] loc("m.onnx":"ws_div")
    %%c = Conv(%%x, %%ws) : f32[2,%d,4,4] loc("m.onnx":"conv")
    %%r = Relu(%%c) : f32[2,%d,4,4] loc("m.onnx":"relu")
    %%p = ReduceMean(%%r) {axes = [2, 3], keepdims = 0} : f32[2,%d] loc("m.onnx":"pool")
    return %%p
  }
}""" % (I, O, O, I, vals, O, O, I, O, I, O, O, O, O, I, O, O, O))
