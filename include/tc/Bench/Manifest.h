// The benchmark suite's manifest (models/manifest.json): models with where
// their ONNX file is and how close their outputs must be, and suites that
// name models or groups of them with the batch sizes to run.
//
//   {"models": [{"name": "small_cnn", "group": "mixed", "recipe": "small_cnn",
//                "committed": "models/small/small_cnn", "rtol": 1e-4, "atol": 1e-5,
//                "amp_err": 2e-2}, ...],
//    "suites": {"ci": {"models": ["small_cnn", "ci/mlp"], "batch": 2, "dynamic_batches": [1, 4]},
//               "vision": {"groups": ["vision"], "batch": 32, "dynamic_batches": [1, 8]}}}
//
// A model may name its suite ("suite": "vision"; the zoo's are vision, text
// and generative): it is in that suite besides any suite listing it or its
// group. A suite named only by its models runs at batch 1 unless "suites"
// has an entry for it with its batch sizes.
//
// A model's ONNX file: "committed" (relative to the folder above the
// manifest, the repository root) is a .onnx file or a folder holding
// model.onnx (and test_data_set_0 with expected outputs); otherwise it is
// looked for in --models-dir as NAME/model.onnx, NAME.onnx or
// NAME.dynamo.onnx (models/export_torch_models.py's name).
// `utils/bench-gpu.py --export-for-bench DIR` writes NAME/model.onnx with one
// test_data_set_N per batch size (PyTorch's fp32 outputs), so full-size
// models need no run of the (slow, exact) reference executor.
#pragma once
#include "tc/Bench/AmpRule.h"
#include "tc/Bench/Tf32Rule.h"
#include <cstdint>
#include <string>
#include <vector>

namespace tc::bench {

struct BenchModel {
  std::string name, group;
  std::string recipe;   // models/export_torch_models.py's entry ("" if none): PyTorch timing
  std::string onnxPath; // "" when not found (then `missing` says where it was looked for)
  std::string missing;
  // test_data_set_N folders beside model.onnx that hold expected outputs:
  // used as the reference at the batch of their inputs.
  std::vector<std::string> dataDirs;
  double rtol = 1e-4, atol = 1e-5; // fp32: elementwise, tc-run --compare
  double ampErr = kAmpErrFloor;    // amp: the floor of AmpRule.h's bound ("amp_err")
  double tf32Err = kTf32ErrFloor;  // fp32 where TF32 may round: Tf32Rule.h's bound ("tf32_err")
  // tc-bench --train (TrainRunner.h): the batch the model trains at
  // ("train_batch", 0: the suite's) and more tc-opt flags for its train step
  // ("train_args": ["--trainable", "^m\\..*", "--freeze", ".*inv_freq"]).
  int64_t trainBatch = 0;
  std::vector<std::string> trainArgs;
};

struct Suite {
  std::string name;
  std::vector<BenchModel> models;
  int64_t batch = 1;                   // batch of the static modes
  std::vector<int64_t> dynamicBatches; // extra sizes the dynamic mode runs at
};

// Loads suite `suite` of the manifest at `path`; `modelsDir` is where
// exported (not committed) models are looked for. Throws tc::Error for an
// unknown suite or a malformed manifest (naming the file).
Suite loadSuite(const std::string &path, const std::string &suite, const std::string &modelsDir);

// Looks for `m` in `modelsDir` again (after tc-bench --export wrote it);
// false when it is still not there.
bool locateExported(BenchModel &m, const std::string &modelsDir);

// The names of the suites in the manifest (entries of "suites" and the
// models' "suite" fields), for --list-suites and errors.
std::vector<std::string> suiteNames(const std::string &path);

} // namespace tc::bench
