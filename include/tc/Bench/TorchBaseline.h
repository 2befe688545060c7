// PyTorch's times for the same model and batch as tc's, so the table carries
// the comparison users care about. PyTorch is Python: this runs
// `utils/bench-gpu.py --torch-only` (the GPU benchmark's own model recipes,
// input generation and timing) as a subprocess and reads its JSON line.
#pragma once
#include "tc/Bench/Manifest.h"
#include "tc/Bench/Result.h"
#include <string>
#include <vector>

namespace tc::bench {

class TorchBaseline {
public:
  // `python` and bench-gpu.py's path; `device` "cuda" (the GPU machine).
  TorchBaseline(std::string python, std::string script, std::string device, unsigned timeoutSeconds,
                int iterations)
      : python_(std::move(python)), script_(std::move(script)), device_(std::move(device)),
        timeout_(timeoutSeconds), iterations_(iterations) {}

  // True when `python -c "import torch"` works and the script exists.
  bool available() const;

  // Rows "torch-eager" and "torch-compile" for `model` (which must have a
  // recipe) at `precision` (fp32, or amp: autocast fp16) on an input of
  // `shape` and dtype `dtype` ("f32", "i64"). A failure is a failed row
  // with reason "torch".
  std::vector<BenchResult> time(const BenchModel &model, const std::string &precision,
                                const std::vector<int64_t> &shape, const std::string &dtype) const;

  static constexpr const char *kModes[] = {"torch-eager", "torch-compile"};

private:
  std::string python_, script_, device_;
  unsigned timeout_;
  int iterations_;
};

} // namespace tc::bench
