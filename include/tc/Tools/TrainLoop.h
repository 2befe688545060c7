// tc-run --train N: runs a train-step module (tc-opt --train;
// tc/IR/TrainSignature.h) N times over batches from a folder, feeding each
// step's new state back as the next step's, printing the loss and the
// throughput; checkpoints in safetensors (the model's state under its ONNX
// initializer names, the optimizer's beside it: tc/Runtime/TrainCheckpoint.h).
#pragma once
#include "tc/IR/IR.h"
#include "tc/Target/Executable.h"
#include <string>

namespace tc::tools {

struct TrainOptions {
  int steps = 0;
  std::string data;        // test_data_set_* folders (cycled), or one such folder
  std::string checkpoint;  // written at the end (and every checkpointEvery steps)
  int checkpointEvery = 0; // 0: at the end only
  std::string resume;      // a checkpoint to start from
  int logEvery = 0;        // 0: about ten lines over the run
  // A GPU target: the state stays in the model's device memory between
  // steps (each step's new state is the next one's device input); it comes
  // to the host for a checkpoint and after the last step, the loss at a
  // logged step only.
  bool deviceState = false;
  // Evaluations during training: an eval step (tc-opt --eval of the same
  // model, loaded like the train step: `evalExe` null runs it on the
  // reference executor) over every batch of evalData, on the train state
  // (its parameters and buffers, by key) every evalEvery steps and after
  // the last.
  const Module *evalModule = nullptr;
  Executable *evalExe = nullptr;
  std::string evalData;
  int evalEvery = 0; // 0: after the last step only
};

// `exe` null: the reference executor runs `m`'s main.
int runTrainLoop(const Module &m, Executable *exe, const TrainOptions &opts);

// tc-run --eval: an eval-step module (tc-opt --eval) over every batch of
// opts.data once, on the state of opts.resume (a train step's checkpoint;
// its optimizer file is not read) or @init's; prints the mean loss and,
// for cross-entropy, the top-1 accuracy.
int runEvalLoop(const Module &m, Executable *exe, const TrainOptions &opts);

} // namespace tc::tools
