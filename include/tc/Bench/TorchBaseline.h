// The PyTorch side of the bench, for the models with a recipe: their ONNX
// export, and PyTorch's own times for the same model and batch as tc's, so
// the table carries the comparison users care about. PyTorch is Python:
// this runs `utils/bench-gpu.py` (the GPU benchmark's model recipes, input
// generation and timing) as a subprocess: `--export-for-bench` to export,
// `--torch-only` to time (one JSON line; with `--inputs DIR` on tc's input,
// reporting AMP's own error), `--check-torch` to see whether
// torch imports. Tests give a stand-in script (test/Bench/Inputs/fake_torch.py).
#pragma once
#include "tc/Bench/Manifest.h"
#include "tc/Bench/Result.h"
#include <optional>
#include <string>
#include <vector>

namespace tc::bench {

// PyTorch's modes: the row's mode and bench-gpu.py's name for it.
struct TorchMode {
  const char *flag;   // tc-bench --torch-modes
  const char *row;    // BenchResult::mode
  const char *script; // bench-gpu.py --modes
};
inline constexpr TorchMode kTorchModes[] = {
    {"eager", "torch-eager", "eager"},
    {"compile", "torch-compile", "inductor"},                     // torch.compile()
    {"reduce-overhead", "torch-reduce-overhead", "inductor-cg"}}; // + CUDA graphs
inline constexpr const char *kTorchEager = "torch-eager";
inline constexpr const char *kTorchReduceOverhead = "torch-reduce-overhead";

class TorchBaseline {
public:
  // `python` and bench-gpu.py's path; `device` "cuda" (the GPU machine) or
  // "cpu"; `modes` the rows to time (TorchMode::row).
  TorchBaseline(std::string python, std::string script, std::string device, unsigned timeoutSeconds,
                int iterations, std::vector<std::string> modes)
      : python_(std::move(python)), script_(std::move(script)), device_(std::move(device)),
        timeout_(timeoutSeconds), iterations_(iterations), modes_(std::move(modes)) {}

  // True when the script exists and `python script --check-torch` works.
  bool available() const;

  // One row per mode for `model` (which must have a recipe) at `precision`
  // (fp32, or amp: autocast fp16) on an input of `shape` and dtype `dtype`
  // ("f32", "i64"), or on `inputDir`/input_0.pb when given (tc's inputs).
  // amp rows with `inputDir` carry torchAmpErr: PyTorch AMP's relative
  // error vs its own fp32 output on that input (AmpRule.h). A failure is a
  // failed row with reason "torch".
  std::vector<BenchResult> time(const BenchModel &model, const std::string &precision,
                                const std::vector<int64_t> &shape, const std::string &dtype,
                                const std::string &inputDir = "") const;

  // PyTorch AMP's relative error on `inputDir`/input_0.pb alone (no
  // timing): for the batches tc runs at that time() did not; nullopt when
  // the script fails (the bound is then the floor alone).
  std::optional<double> ampError(const BenchModel &model, const std::string &inputDir) const;

  // Exports `model`'s recipe to DIR/NAME/model.onnx with PyTorch's outputs
  // at `batches` (test_data_set_N); "" or the one-line reason it failed.
  std::string exportModel(const BenchModel &model, const std::string &dir,
                          const std::vector<int64_t> &batches) const;

  const std::vector<std::string> &modes() const { return modes_; }

private:
  std::string python_, script_, device_;
  unsigned timeout_;
  int iterations_;
  std::vector<std::string> modes_;
};

} // namespace tc::bench
