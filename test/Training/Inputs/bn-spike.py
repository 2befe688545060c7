"""A batch norm over 2 channels of 512 x 128 values where every 128th value
holds a spike of 40 (its normalized value about 11; the rest near -0.1):
amp-reduction-prologue.test. With mse and a loss scale of 1e8, the spikes'
scaled gradient dy is about 1.7e4 (an f16 value) and dy * xhat about 1.9e5,
past f16's 65504."""
print("""module @m {
  func @main(%x: f32[1,2,512,128]) -> (f32[1,2,512,128]) {
    %p = const f32[1,1,1,128] [40.0ZEROS]
    %shape = const i64[4] [1, 2, 512, 128]
    %spike = Expand(%p, %shape) : f32[1,2,512,128]
    %xs = Add(%x, %spike) : f32[1,2,512,128]
    %g = const f32[2] [1.0, 1.0]
    %b = const f32[2] [0.0, 0.0]
    %m = const f32[2] [0.0, 0.0]
    %v = const f32[2] [1.0, 1.0]
    %n = BatchNormalization(%xs, %g, %b, %m, %v) : f32[1,2,512,128]
    return %n
  }
}""".replace("ZEROS", ", 0.0" * 127))
