// tc-bench --train: per model and precision, tc's compiled train step
// beside PyTorch's (TorchTrainer.h), from the same initial weights (the
// ONNX file's initializers) on the same batches (test_data_set_N beside
// the ONNX file: input_0.pb the input, input_1.pb the labels), with the
// same optimizer and loss (AdamW lr 1e-4 weight decay 0.01, cross-entropy):
//
//   tc-import | tc-opt --train --loss=cross-entropy --optimizer=adamw:...
//     -O2 --target=T [--precision=fp16] | tc-codegen | tc-run --train N
//     --log-every 1 --data DIR          -> row mode "default", kind "train"
//   bench-train.py --torch-train       -> rows torch-eager, torch-compile
//
// Every step reads its loss back on both sides. A row passes when its
// losses match PyTorch's (LossRule.h); latency is the median ms per step
// after --warmup steps, compile time tc-import + tc-opt + tc-codegen (PyTorch:
// torch.compile's first step), peak memory the device's (CUDA), host steps
// the artifact's.
#pragma once
#include "tc/Bench/Manifest.h"
#include "tc/Bench/Progress.h"
#include "tc/Bench/Result.h"
#include "tc/Bench/Runner.h"
#include "tc/Bench/TorchTrainer.h"
#include <functional>
#include <string>

namespace tc::bench {

struct TrainOptions {
  int steps = 20; // train steps per side and precision (each timed, its loss read back)
  // Set: PyTorch's rows, and the losses tc's are checked against. Unset
  // (--torch off): tc's rows fail with reason "reference".
  const TorchTrainer *torch = nullptr;
  // Set: a model with a recipe not in RunnerOptions::exportDir is exported
  // there first (bench-train.py --export-for-train).
  const TorchTrainer *exporter = nullptr;
};

// The progress bar's units: per model and precision, tc's row and PyTorch's.
size_t countTrainUnits(const Suite &suite, const RunnerOptions &opts, const TrainOptions &train);

// Runs every model of `suite` in training mode; RunnerOptions gives the
// tools, target, precisions, warmup, threads, batch and time limit (its
// modes and torch are not used). Failures are rows.
void runTrainSuite(const Suite &suite, const RunnerOptions &opts, const TrainOptions &train,
                   Progress &progress, const std::function<void(const BenchResult &)> &onResult);

// "cnn default fp32 b4 train: pass 1.234 ms/step (p10 .., p90 ..), 0.50x torch
// eager, ..., losses 2.1e-06 <= 1.0e-03 at step 20".
std::string formatTrainResult(const BenchResult &r);

// The folder of a model's training batches: beside DIR/model.onnx, DIR;
// beside NAME.onnx, the folder NAME; "" when it holds no test_data_set_*.
std::string trainDataDir(const std::string &onnxPath);

} // namespace tc::bench
