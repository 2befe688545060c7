// The PyTorch side of tc-bench --train: `utils/bench-train.py` as a
// subprocess (the models of models/training_models.py), to export a model
// with the batches both sides train on (`--export-for-train`) and to run
// PyTorch's own train steps, eager and torch.compile(), from the ONNX file's
// initial weights on those batches (`--torch-train`, one JSON line).
// Tests give a stand-in script (test/Bench/Inputs/fake_torch_train.py).
#pragma once
#include "tc/Bench/Manifest.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tc::bench {

// PyTorch's training modes: the row's mode and bench-train.py's name.
struct TorchTrainMode {
  const char *flag; // tc-bench --torch-modes (with --train)
  const char *row;  // BenchResult::mode
};
inline constexpr TorchTrainMode kTorchTrainModes[] = {{"eager", "torch-eager"},
                                                      {"compile", "torch-compile"}};

// The optimizer and loss both sides train with (docs/training.md's GPU
// table): tc-opt --optimizer=adamw:lr=...,weight-decay=... and PyTorch's
// AdamW(lr, weight_decay), cross-entropy with ignore_index -100.
inline constexpr double kTrainLr = 1e-4, kTrainWeightDecay = 0.01;

// One PyTorch mode's steps; `error` set when the mode failed.
struct TorchSteps {
  std::vector<double> losses;
  std::vector<double> scales; // amp: GradScaler's scale after each step
  std::optional<double> ms, p10Ms, p90Ms, compileS;
  std::optional<int64_t> peakBytes; // CUDA: max_memory_allocated
  std::string error;
};

struct TorchTraining {
  std::string error; // the whole run failed (script error, no JSON): every mode's reason
  bool timedOut = false;
  std::map<std::string, TorchSteps> modes; // by flag: eager, compile
  std::vector<double> fp32EagerLosses;     // amp: PyTorch fp32 eager on the same batches
  std::vector<double> f64EagerLosses;      // fp32 with f64Reference: PyTorch f64 eager's
  std::string init;                        // "k/n": state tensors set from the ONNX file
};

class TorchTrainer {
public:
  TorchTrainer(std::string python, std::string script, std::string device, unsigned timeoutSeconds,
               std::vector<std::string> modes)
      : python_(std::move(python)), script_(std::move(script)), device_(std::move(device)),
        timeout_(timeoutSeconds), modes_(std::move(modes)) {}

  // True when the script exists and `python script --check-torch` works.
  bool available() const;

  // Exports `model`'s recipe to DIR/NAME/model.onnx with its batches at
  // `batch` (test_data_set_N: input_0.pb, input_1.pb the labels); "" or the
  // one-line reason it failed.
  std::string exportModel(const BenchModel &model, const std::string &dir, int64_t batch) const;

  // PyTorch's `steps` train steps of `model` at `precision` (fp32, amp) from
  // `onnx`'s initializers on `dataDir`'s batches, timed after `warmup`.
  // `threads` (> 0): PyTorch's intra-op threads (torch.set_num_threads),
  // tc-run's --threads on the CPU, so both sides get the same cores.
  TorchTraining train(const BenchModel &model, const std::string &onnx, const std::string &dataDir,
                      const std::string &precision, int steps, int warmup,
                      unsigned threads = 0) const;

  const std::vector<std::string> &modes() const { return modes_; } // flags

  // fp32 runs also train PyTorch eager in f64, the losses fp32's are held
  // to (tc-bench --f64-reference; LossRule.h says why).
  void setF64Reference(bool on) { f64Reference_ = on; }

private:
  std::string python_, script_, device_;
  unsigned timeout_;
  std::vector<std::string> modes_;
  bool f64Reference_ = false;
};

} // namespace tc::bench
